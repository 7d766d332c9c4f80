import Foundation
import PulseCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One run of a program to its end, without a shell, within a bound of time and memory whatever the program does.
///
/// The program gets `input` on its stdin: all of it, or as much as it reads before it closes stdin or exits. Its
/// stdout and stderr share one pipe that is read while it runs, so it never blocks on a full pipe; the first
/// ``keptOutput`` bytes are kept and the rest counted and thrown away. A program still running at the deadline (or
/// when the calling task is cancelled) gets SIGTERM, and SIGKILL ``stopGrace`` later; both go to its process group
/// (the program is the leader of a group of its own), so a script's own children stop with it. Every child is
/// reaped: by the run, or — if even SIGKILL has not ended it within ``reapMargin`` (a process stuck in the kernel)
/// — by a thread left waiting for it. ``run(input:)`` therefore returns within timeout + ``stopGrace`` +
/// ``reapMargin`` and a few polling rounds.
///
/// The pipes are written and read without blocking, from a poll loop on a thread of the run's own whose SIGPIPE is
/// blocked: a program that exits without reading its input costs an `EPIPE`, never a signal to the daemon.
struct ChildProcess: Sendable {
    /// The program (a path, not looked up in `PATH`) and its arguments.
    let arguments: [String]
    /// Milliseconds the program has to exit.
    let timeout: Int64
    /// Milliseconds between SIGTERM and SIGKILL: long enough for a program to finish a write and exit cleanly, short
    /// enough that a stuck program holds its receiver's queue for only a moment longer than the timeout.
    var stopGrace: Int64 = 2_000
    /// Milliseconds to wait for a SIGKILLed program to be reaped before a thread is left to wait for it.
    var reapMargin: Int64 = 1_000
    /// Bytes of stdout and stderr kept (for a log line).
    var keptOutput = 2_048

    /// How a run ended.
    struct Outcome: Sendable {
        /// The status `waitpid` gave; nil if the program had still not ended ``reapMargin`` after SIGKILL.
        var status: Int32?
        /// Why the program was stopped, if it was.
        var stopped: Stop?
        /// Whether it needed SIGKILL (it outlived SIGTERM by ``stopGrace``).
        var killed = false
        /// The first ``keptOutput`` bytes it wrote to stdout and stderr.
        var output: [UInt8] = []
        /// Every byte it wrote to stdout and stderr.
        var outputBytes = 0
        /// Bytes of the input it took.
        var inputWritten = 0

        /// The exit code, if it exited by itself (not by a signal).
        var exitCode: Int32? {
            guard let status, status & 0x7f == 0 else { return nil }
            return (status >> 8) & 0xff
        }

        /// The signal that ended it, if one did.
        var signal: Int32? {
            guard let status else { return nil }
            let number = status & 0x7f
            return number != 0 && number != 0x7f ? number : nil
        }
    }

    enum Stop: Sendable {
        /// It was still running at the deadline.
        case timeout
        /// The task waiting for it was cancelled (the daemon is stopping).
        case cancelled
    }

    /// Runs the program to its end. Waits without blocking the calling task (the run has a thread of its own).
    ///
    /// - Throws: ``ChildProcessError`` when the program cannot be started (not found, not executable).
    func run(input: [UInt8]) async throws -> Outcome {
        let child = try spawn()
        let cancelled = AtomicFlag()
        let supervisor = Supervisor(child: child, input: input, settings: self, cancelled: cancelled)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let thread = Thread {
                    // A write to a pipe whose reader is gone then fails with EPIPE instead of raising SIGPIPE; a
                    // SIGPIPE left pending on this thread is discarded when it ends.
                    var pipeSignal = sigset_t()
                    sigemptyset(&pipeSignal)
                    sigaddset(&pipeSignal, SIGPIPE)
                    pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
                    continuation.resume(returning: supervisor.run())
                }
                thread.name = "netpulse command"
                thread.start()
            }
        } onCancel: {
            cancelled.set()
        }
    }

    /// The program's process id and the parent's ends of its pipes.
    fileprivate struct Spawned: Sendable {
        var pid: pid_t
        var input: Int32
        var output: Int32
    }

    /// Starts the program in a process group of its own, stdin and stdout+stderr on fresh pipes, the signal mask and
    /// the signals the daemon ignores or handles reset to their defaults (a program must not inherit an ignored
    /// SIGTERM or SIGPIPE).
    private func spawn() throws -> Spawned {
        guard let program = arguments.first else { throw ChildProcessError(description: "no program to run") }
        var inputPipe: [Int32] = [-1, -1]
        var outputPipe: [Int32] = [-1, -1]
        guard pipe(&inputPipe) == 0 else { throw ChildProcessError(program, "cannot make a pipe", errno) }
        guard pipe(&outputPipe) == 0 else {
            let code = errno
            close(inputPipe[0])
            close(inputPipe[1])
            throw ChildProcessError(program, "cannot make a pipe", code)
        }
        // Only the copies on 0, 1 and 2 reach the program; a later program must not hold these ends either (its
        // stdin would never see the end). `pipe2` with O_CLOEXEC is not in Swift's Glibc module; nothing else in the
        // daemon starts programs, so no spawn can come between pipe and fcntl.
        for descriptor in inputPipe + outputPipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        // The child's ends are closed in the parent whatever happens; the parent's only if the spawn fails.
        defer {
            close(inputPipe[0])
            close(outputPipe[1])
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inputPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD, SIGALRM] {
            sigaddset(&defaults, number)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        let argv = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, program, &actions, &attributes, argv, environ)
        guard result == 0 else {
            close(inputPipe[1])
            close(outputPipe[0])
            throw ChildProcessError(program, "cannot start", result)
        }
        _ = fcntl(inputPipe[1], F_SETFL, fcntl(inputPipe[1], F_GETFL) | O_NONBLOCK)
        _ = fcntl(outputPipe[0], F_SETFL, fcntl(outputPipe[0], F_GETFL) | O_NONBLOCK)
        return Spawned(pid: pid, input: inputPipe[1], output: outputPipe[0])
    }
}

/// A program that could not be started.
struct ChildProcessError: Error, CustomStringConvertible {
    var description: String

    init(description: String) { self.description = description }

    init(_ program: String, _ what: String, _ code: Int32) {
        description = "\(what) \(program): \(String(cString: strerror(code)))"
    }
}

/// The poll loop of one run: feeds stdin, drains stdout and stderr, and stops and reaps the program.
private struct Supervisor: Sendable {
    let child: ChildProcess.Spawned
    let input: [UInt8]
    let settings: ChildProcess
    let cancelled: AtomicFlag

    /// Longest one poll waits, so that the program's exit (seen with `waitpid`) and cancellation are noticed soon.
    static let pollInterval: Int64 = 50
    /// Reads of up to ``chunk`` bytes per round at most, so a program writing without pause cannot keep the loop
    /// from its deadline.
    static let readsPerRound = 16
    static let chunk = 65_536

    func run() -> ChildProcess.Outcome {
        var outcome = ChildProcess.Outcome()
        outcome.output.reserveCapacity(settings.keptOutput)
        var scratch = [UInt8](repeating: 0, count: Self.chunk)
        var inputOpen = true
        var outputOpen = true
        if input.isEmpty {
            close(child.input)
            inputOpen = false
        }
        let deadline = MonotonicMilliseconds.now() + settings.timeout
        var terminatedAt: Int64?
        var killedAt: Int64?

        while true {
            var raw: Int32 = 0
            let reaped = waitpid(child.pid, &raw, WNOHANG)
            if reaped == child.pid {
                outcome.status = raw
                break
            }
            if reaped == -1 && errno != EINTR {
                // Reaped elsewhere (nothing else in the daemon waits for children): nothing left to wait for.
                break
            }
            let now = MonotonicMilliseconds.now()
            if terminatedAt == nil && (now >= deadline || cancelled.isSet) {
                outcome.stopped = now >= deadline ? .timeout : .cancelled
                kill(-child.pid, SIGTERM)
                terminatedAt = now
            }
            if let terminatedAt, killedAt == nil, now >= terminatedAt + settings.stopGrace {
                kill(-child.pid, SIGKILL)
                outcome.killed = true
                killedAt = now
            }
            if let killedAt, now >= killedAt + settings.reapMargin {
                let pid = child.pid
                let reaper = Thread {
                    var status: Int32 = 0
                    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
                }
                reaper.name = "netpulse reaper"
                reaper.start()
                break
            }

            let next: Int64
            if let killedAt {
                next = killedAt + settings.reapMargin
            } else if let terminatedAt {
                next = terminatedAt + settings.stopGrace
            } else {
                next = deadline
            }
            var descriptors = [pollfd]()
            if outputOpen { descriptors.append(pollfd(fd: child.output, events: Int16(POLLIN), revents: 0)) }
            if inputOpen { descriptors.append(pollfd(fd: child.input, events: Int16(POLLOUT), revents: 0)) }
            let wait = Int32(max(0, min(Self.pollInterval, next - now)))
            _ = poll(&descriptors, nfds_t(descriptors.count), wait)

            if outputOpen && !drainOutput(into: &outcome, scratch: &scratch, rounds: Self.readsPerRound) {
                close(child.output)
                outputOpen = false
            }
            if inputOpen && !feedInput(&outcome) {
                close(child.input)
                inputOpen = false
            }
        }
        // What the program wrote just before it ended; a child it left behind may hold the pipe open, so this
        // reads what is there now and does not wait for the end of the stream.
        if outputOpen {
            _ = drainOutput(into: &outcome, scratch: &scratch, rounds: Self.readsPerRound)
            close(child.output)
        }
        if inputOpen { close(child.input) }
        return outcome
    }

    /// Reads what is waiting, keeping the first bytes; false once the pipe is at its end or broken.
    private func drainOutput(into outcome: inout ChildProcess.Outcome, scratch: inout [UInt8], rounds: Int) -> Bool {
        for _ in 0..<rounds {
            let count = scratch.withUnsafeMutableBytes { read(child.output, $0.baseAddress, $0.count) }
            if count > 0 {
                outcome.outputBytes += count
                let room = settings.keptOutput - outcome.output.count
                if room > 0 { outcome.output.append(contentsOf: scratch.prefix(min(room, count))) }
                continue
            }
            if count == 0 { return false }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return true
            default: return false
            }
        }
        return true
    }

    /// Writes what the pipe takes now; false once all is written or the program no longer reads (EPIPE).
    private func feedInput(_ outcome: inout ChildProcess.Outcome) -> Bool {
        while outcome.inputWritten < input.count {
            let rest = input[outcome.inputWritten...].prefix(Self.chunk)
            let count = rest.withUnsafeBytes { bytes in write(child.input, bytes.baseAddress, bytes.count) }
            if count > 0 {
                outcome.inputWritten += count
                continue
            }
            if count == 0 { return true }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return true
            default: return false
            }
        }
        return false
    }
}
