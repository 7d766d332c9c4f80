import PulseCore

/// Runs the configured program without a shell, the notification on its stdin. Exit status 0 within the timeout is
/// delivered; anything else is an error (retried). A program still running at the timeout gets SIGTERM, then
/// SIGKILL ``ChildProcess/stopGrace`` (2 s) later, so one delivery lasts at most timeout + 2 s and a moment
/// (``bound``), whatever the program does with its input and output.
struct CommandReceiver: Sendable {
    let arguments: [String]
    /// Milliseconds.
    let timeout: Int64

    private var child: ChildProcess { ChildProcess(arguments: arguments, timeout: timeout) }

    /// Milliseconds one ``run(_:)`` can take at most (a stuck program's SIGKILL not taking effect included).
    var bound: Int64 { timeout + child.stopGrace + child.reapMargin + 1_000 }

    /// - Throws: ``WebhookError`` saying what the program did instead of exiting 0 in time, with the start of
    ///   what it wrote.
    func run(_ body: [UInt8]) async throws {
        let program = arguments.first ?? "the command"
        let outcome: ChildProcess.Outcome
        do {
            outcome = try await child.run(input: body)
        } catch {
            throw WebhookError(description: "\(error)")
        }
        let said = String(decoding: outcome.output, as: UTF8.self).trimmingWhitespace()
        let saying = said.isEmpty ? "" : ": \(said)"
        if let stopped = outcome.stopped {
            let how =
                outcome.killed
                ? "SIGTERM, then SIGKILL \(Units.formatDuration(child.stopGrace)) later"
                : "SIGTERM"
            let why =
                switch stopped {
                case .timeout: "did not exit within \(Units.formatDuration(timeout))"
                case .cancelled: "was still running when the daemon stopped"
                }
            throw WebhookError(description: "\(program) \(why); stopped with \(how)\(saying)")
        }
        if let code = outcome.exitCode {
            guard code == 0 else { throw WebhookError(description: "\(program) exited with status \(code)\(saying)") }
            return
        }
        if let signal = outcome.signal {
            throw WebhookError(description: "\(program) was killed by signal \(signal)\(saying)")
        }
        throw WebhookError(description: "\(program) ended, but its exit status was lost")
    }
}
