import Foundation

/// Programs run to their end, for the tests that check their output with real tools (`openssl`) or run the real
/// binaries.
public enum Command {
    /// What a program left when it ended.
    public struct Finished: Sendable {
        public var status: Int32
        public var output: String
        public var errors: String
    }

    /// A program that did not end in its time, killed.
    public struct Overran: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `arguments` (the program found on `PATH`) with no input; its exit status and its standard output and
    /// standard error together.
    public static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let finished = try runToEnd("/usr/bin/env", arguments, mergingErrors: true)
        return (finished.status, finished.output)
    }

    /// Runs `executable` with no input to its end, at most `timeout` seconds, and returns its exit status and what
    /// it wrote (standard error into `output` too when `mergingErrors`). What it writes goes to temporary files, not
    /// pipes: a program that leaves a child behind holding its output (a daemon started by a script, a sandbox's
    /// `nsenter`) cannot keep the test waiting for an end of file. One that outlives `timeout` is killed with its
    /// children, and ``Overran`` names it and shows what it wrote: a hang fails the test that met it, where it
    /// would otherwise stop the whole run at its time limit, showing nothing.
    public static func runToEnd(
        _ executable: String, _ arguments: [String], mergingErrors: Bool = false, timeout: Double = 600
    ) throws -> Finished {
        let name = FileManager.default.temporaryDirectory.path + "/netpulse-run-\(getpid())-\(UUID().uuidString)"
        let outputPath = name + ".out"
        let errorsPath = mergingErrors ? outputPath : name + ".err"
        defer {
            try? FileManager.default.removeItem(atPath: outputPath)
            try? FileManager.default.removeItem(atPath: errorsPath)
        }
        for path in Set([outputPath, errorsPath]) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let errors = mergingErrors ? output : try FileHandle(forWritingTo: URL(fileURLWithPath: errorsPath))
        defer {
            try? output.close()
            if !mergingErrors { try? errors.close() }
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = errors
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        // Decoded as a pipe's bytes were: invalid UTF-8 repaired, not the whole output lost.
        let read = { (path: String) in
            String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
        }
        if ended.wait(timeout: .now() + timeout) == .timedOut {
            killTree(process.processIdentifier)
            _ = ended.wait(timeout: .now() + 10)
            throw Overran(
                description: """
                    \(([executable] + arguments).joined(separator: " ")) did not end within \(Int(timeout)) s and was \
                    killed; it wrote:
                    \(read(outputPath))\(mergingErrors ? "" : read(errorsPath))
                    """)
        }
        process.waitUntilExit()
        return Finished(status: process.terminationStatus, output: read(outputPath), errors: read(errorsPath))
    }

    /// Sends SIGKILL to `pid` and to every process below it, found through `/proc`.
    public static func killTree(_ pid: Int32) {
        var found = [pid]
        var index = 0
        while index < found.count {
            let directory = "/proc/\(found[index])/task"
            for task in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
                let children = try? String(contentsOfFile: "\(directory)/\(task)/children", encoding: .utf8)
                found += (children ?? "").split(separator: " ").compactMap { Int32($0) }
            }
            index += 1
        }
        for process in found { kill(process, SIGKILL) }
    }
}
