import Foundation
import PulseCore
import Synchronization
import Testing

@testable import PulseDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The command receiver against real programs (shell and Python scripts the tests write): whatever a program does
/// with its input and output, a delivery ends within timeout + 2 s (SIGTERM's grace) and a moment, and the program
/// is reaped. Before, the payload was written with a blocking call before the timeout started and the output read
/// with a blocking call before the program was stopped: the first three tests hung for ever.
@Suite(.timeLimit(.minutes(1))) struct CommandReceiverTests {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "netpulse-command-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// Writes a script; returns the command that runs it: its interpreter and its path. (Executing a file just
    /// written can fail with ETXTBSY while another test's spawn briefly holds the writer's descriptor.)
    func script(_ name: String, interpreter: String = "/bin/sh", _ text: String) throws -> [String] {
        let path = "\(directory)/\(name)"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return [interpreter, path]
    }

    /// A payload of `count` bytes, as an alert's SVG makes it (far over a pipe's 64 KiB).
    func payload(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 % 251) } }

    /// Runs `receiver` and returns its error (nil if delivered) and the seconds it took, or nil if it had not
    /// returned after `limit` seconds. The delivery runs on a thread of its own (``ThreadExecutor``) and the test
    /// keeps its own deadline: a receiver that blocks its thread for ever, as the old one did, fails the test instead
    /// of hanging it (`.timeLimit` cannot end a test stuck in a blocking call). The delivery's task is cancelled
    /// once `cancelWhen` says so.
    func deliver(
        _ receiver: CommandReceiver, _ body: [UInt8], limit: Double = 30, cancelWhen: () -> Bool = { false }
    ) async throws -> (error: String?, seconds: Double) {
        let result = Mutex<(error: String?, seconds: Double)?>(nil)
        let clock = ContinuousClock()
        let started = clock.now
        let delivery = Task(executorPreference: ThreadExecutor()) {
            var error: String?
            do { try await receiver.run(body) } catch let failure { error = "\(failure)" }
            let took = clock.now - started
            result.withLock {
                $0 = (error, Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18)
            }
        }
        while clock.now - started < .seconds(limit) {
            if let done = result.withLock({ $0 }) { return done }
            if !delivery.isCancelled && cancelWhen() { delivery.cancel() }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ChildProcessError(description: "the delivery did not return within \(limit) s")
    }

    /// Whether process `pid` is gone, reaped too (a zombie still answers `kill(pid, 0)`).
    func isGone(_ pid: pid_t) -> Bool { kill(pid, 0) == -1 && errno == ESRCH }

    func pid(in file: String) throws -> pid_t {
        let text = try String(contentsOfFile: file, encoding: .utf8).trimmingWhitespace()
        guard let pid = pid_t(text) else { throw ChildProcessError(description: "no pid in \(file): \(text)") }
        return pid
    }

    @Test func aProgramThatNeverReadsItsInputAndSleepsIsStoppedWithinTheBound() async throws {
        let pidFile = "\(directory)/pid"
        let program = try script("sleeper", "echo $$ > \"$1\"\nexec sleep 1000\n")
        let receiver = CommandReceiver(arguments: program + [pidFile], timeout: 1_000)
        let (error, seconds) = try await deliver(receiver, payload(512 * 1_024))
        #expect(error == "/bin/sh did not exit within 1s; stopped with SIGTERM")
        #expect(seconds >= 1 && seconds <= Double(receiver.bound) / 1_000, "took \(seconds) s")
        #expect(isGone(try pid(in: pidFile)))
    }

    @Test func aProgramThatIgnoresSIGTERMIsKilled() async throws {
        let pidFile = "\(directory)/pid"
        // `trap ''` makes the shell and the sleeps it starts ignore SIGTERM.
        let program = try script(
            "stubborn", "trap '' TERM\necho $$ > \"$1\"\nwhile :; do sleep 1; done\n")
        let receiver = CommandReceiver(arguments: program + [pidFile], timeout: 1_000)
        let (error, seconds) = try await deliver(receiver, Array("{}".utf8))
        #expect(error == "/bin/sh did not exit within 1s; stopped with SIGTERM, then SIGKILL 2s later")
        #expect(seconds >= 3 && seconds <= Double(receiver.bound) / 1_000, "took \(seconds) s")
        #expect(isGone(try pid(in: pidFile)))
    }

    /// A program that writes megabytes to stdout and stderr while it reads its input, and more after: neither side
    /// waits for the other, all of the input arrives, and only the first 2 KiB of the output are kept.
    @Test func aChattyProgramGetsItsWholeInputWithoutDeadlock() async throws {
        let report = "\(directory)/report"
        let program = try script(
            "chatty", interpreter: "/usr/bin/python3",
            """
            import sys
            out, err = sys.stdout.buffer, sys.stderr.buffer
            received = written = 0
            while True:
                data = sys.stdin.buffer.read1(65536)
                if not data:
                    break
                received += len(data)
                out.write(b"o" * 65536); err.write(b"e" * 65536); out.flush(); err.flush()
                written += 131072
            for _ in range(64):
                out.write(b"o" * 65536); err.write(b"e" * 65536)
                written += 131072
            out.flush(); err.flush()
            open(sys.argv[1], "w").write(f"{received} {written}")

            """)
        let body = payload(1_024 * 1_024)
        let outcome = try await ChildProcess(arguments: program + [report], timeout: 30_000).run(input: body)
        #expect(outcome.exitCode == 0 && outcome.stopped == nil)
        let figures = try String(contentsOfFile: report, encoding: .utf8).split(separator: " ").compactMap { Int($0) }
        #expect(figures.first == body.count, "the program received \(figures)")
        #expect(outcome.inputWritten == body.count)
        #expect(figures.last == outcome.outputBytes && outcome.outputBytes > 8 * 1_024 * 1_024)
        #expect(outcome.output.count == 2_048)

        let (error, _) = try await deliver(CommandReceiver(arguments: program + [report], timeout: 30_000), body)
        #expect(error == nil)
    }

    /// A program that exits 0 without reading its input is delivered; the broken pipe costs the daemon nothing.
    /// Run alone, this test's process has SIGPIPE at its default, so a raised one would end it; in the whole suite
    /// another test's library may have ignored it already (the delivery is checked either way).
    @Test func aProgramThatExitsWithoutReadingALargePayloadIsDelivered() async throws {
        let program = try script("quick", "exit 0\n")
        let outcome = try await ChildProcess(arguments: program, timeout: 10_000).run(input: payload(1_024 * 1_024))
        #expect(outcome.exitCode == 0 && outcome.stopped == nil)
        #expect(outcome.inputWritten < 1_024 * 1_024)
        let (error, _) = try await deliver(CommandReceiver(arguments: program, timeout: 10_000), payload(1_024 * 1_024))
        #expect(error == nil)
    }

    @Test func aFailingProgramsErrorQuotesWhatItSaid() async throws {
        let program = try script("failing", "cat > /dev/null\necho 'pager: no route to on-call' >&2\nexit 3\n")
        let (error, _) = try await deliver(CommandReceiver(arguments: program, timeout: 10_000), payload(200_000))
        #expect(error == "/bin/sh exited with status 3: pager: no route to on-call")

        let missing = "\(directory)/missing"
        let (notStarted, _) = try await deliver(CommandReceiver(arguments: [missing], timeout: 10_000), [])
        #expect(notStarted == "cannot start \(missing): No such file or directory")
    }

    /// A daemon that stops (the delivery task cancelled) stops the program at once rather than at its timeout.
    @Test func cancellingADeliveryStopsTheProgram() async throws {
        let pidFile = "\(directory)/pid"
        let program = try script("sleeper", "echo $$ > \"$1\"\nexec sleep 1000\n")
        let receiver = CommandReceiver(arguments: program + [pidFile], timeout: 600_000)
        let (error, seconds) = try await deliver(receiver, []) { (try? pid(in: pidFile)) != nil }
        #expect(error == "/bin/sh was still running when the daemon stopped; stopped with SIGTERM")
        #expect(seconds < 60, "took \(seconds) s")
        #expect(isGone(try pid(in: pidFile)))
    }
}

/// Runs tasks on a dispatch queue's thread rather than the shared cooperative pool, so a task blocked in a system
/// call holds up only its own thread.
final class ThreadExecutor: TaskExecutor {
    let queue = DispatchQueue(label: "netpulse.test.delivery")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
