import PulseCore
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A mutation driver for ``fuzzIngest(_:_:)`` where libFuzzer is not linked in: it reads the seed corpus, and until
/// its time is up runs inputs made from the seeds by libFuzzer's kinds of mutation (bit flips, interesting bytes,
/// inserted, erased and copied runs, splices of two inputs). Each input is written to `ARTIFACTS/current` before it
/// runs, so one that traps is left behind, as libFuzzer leaves `crash-*`.
///
///     netpulse-fuzz-ingest CORPUS... [-max_total_time=SECONDS] [-runs=N] [-seed=N] [-artifact_prefix=DIR/]
///     netpulse-fuzz-ingest --write-seeds DIR
enum FuzzDriver {
    static func main(_ arguments: [String]) -> Int32 {
        var directories = [String]()
        var seconds: Int64 = 20
        var runs = Int.max
        var seed = UInt64(WallClock.system.now())
        var artifacts = ".build-fuzz/"
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            if argument == "--write-seeds", let directory = iterator.next() {
                return writeSeeds(directory)
            } else if let value = argument.value(of: "-max_total_time=") {
                seconds = Int64(value) ?? seconds
            } else if let value = argument.value(of: "-runs=") {
                runs = Int(value) ?? runs
            } else if let value = argument.value(of: "-seed=") {
                seed = UInt64(value) ?? seed
            } else if let value = argument.value(of: "-artifact_prefix=") {
                artifacts = value
            } else if argument.hasPrefix("-") {
                printError("ignoring \(argument)")
            } else {
                directories.append(argument)
            }
        }
        var corpus = [[UInt8]]()
        for directory in directories {
            for name in ((try? FileIO.listDirectory(directory)) ?? []).sorted() {
                if let bytes = try? FileIO.readBytes("\(directory)/\(name)") { corpus.append(bytes) }
            }
        }
        if corpus.isEmpty { corpus = Seeds.all }
        var random = SplitMix64(seed: seed)
        let start = MonotonicMilliseconds.now()
        var executions = 0
        let current = artifacts + "current"
        // Every seed once, then mutants.
        var queue = corpus
        while executions < runs && MonotonicMilliseconds.now() - start < seconds * 1_000 {
            let input: [UInt8]
            if queue.isEmpty {
                input = mutate(corpus[Int(random.next() % UInt64(corpus.count))], corpus: corpus, &random)
            } else {
                input = queue.removeFirst()
            }
            try? FileIO.writeAtomically(current, input)
            input.withUnsafeBufferPointer { buffer in
                _ = fuzzIngest(buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!, buffer.count)
            }
            executions += 1
        }
        try? FileIO.remove(current)
        let elapsed = max(1, MonotonicMilliseconds.now() - start)
        let peak = peakResidentMebibytes()
        print("stat::number_of_executed_units: \(executions)")
        print("stat::executions_per_second: \(Int64(executions) * 1_000 / elapsed)")
        print("stat::peak_rss_mb: \(peak)")
        print("stat::seed: \(seed)")
        // As libFuzzer's -rss_limit_mb=1024: a program that grows memory without bound fails the run.
        guard peak <= 1_024 else {
            printError("peak resident memory \(peak) MiB, over 1,024 MiB")
            return 1
        }
        return 0
    }

    /// The process's peak resident memory (`VmHWM`), MiB.
    static func peakResidentMebibytes() -> Int {
        let status = (try? FileIO.readString("/proc/self/status")) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) / 1_024
    }

    /// One mutant of `input`: one to four of libFuzzer's kinds of change.
    static func mutate(_ input: [UInt8], corpus: [[UInt8]], _ random: inout SplitMix64) -> [UInt8] {
        var bytes = input.isEmpty ? [0] : input
        let interesting: [UInt8] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 0x7F, 0x80, 0xFE, 0xFF]
        for _ in 0...(random.next() % 4) {
            let position = Int(random.next() % UInt64(bytes.count))
            switch random.next() % 7 {
            case 0: bytes[position] ^= UInt8(1 << (random.next() % 8))
            case 1: bytes[position] = interesting[Int(random.next() % UInt64(interesting.count))]
            case 2: bytes[position] = UInt8(truncatingIfNeeded: random.next())
            case 3: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: position)
            case 4:
                if bytes.count > 1 {
                    bytes.removeSubrange(position..<min(bytes.count, position + 1 + Int(random.next() % 8)))
                }
            case 5:
                let end = min(bytes.count, position + 1 + Int(random.next() % 16))
                bytes.insert(contentsOf: bytes[position..<end], at: Int(random.next() % UInt64(bytes.count)))
            default:
                let other = corpus[Int(random.next() % UInt64(corpus.count))]
                if !other.isEmpty {
                    let from = Int(random.next() % UInt64(other.count))
                    bytes = Array(bytes[..<position]) + Array(other[from...])
                }
            }
            if bytes.isEmpty { bytes = [0] }
        }
        return Array(bytes.prefix(4_096))
    }

    static func writeSeeds(_ directory: String) -> Int32 {
        do {
            try FileIO.createDirectory(directory)
            for (index, seed) in Seeds.all.enumerated() {
                try FileIO.writeAtomically("\(directory)/seed-\(index)", seed)
            }
            print("\(Seeds.all.count) seeds written to \(directory)")
            return 0
        } catch {
            printError("\(error)")
            return 1
        }
    }
}

extension String {
    /// What follows `prefix` when the string starts with it.
    fileprivate func value(of prefix: String) -> String? {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : nil
    }
}
