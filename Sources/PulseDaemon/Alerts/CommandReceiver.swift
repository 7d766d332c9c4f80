import Foundation
import PulseCore

/// Runs the configured program without a shell, the notification on its stdin, and waits for it to exit within
/// the timeout (then it is killed). Exit status 0 is delivered; anything else is retried.
struct CommandReceiver: Sendable {
    let arguments: [String]
    let timeout: Int64

    func run(_ body: [UInt8]) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        let exited = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { process in
            exited.continuation.yield(process.terminationStatus)
            exited.continuation.finish()
        }
        do {
            try process.run()
        } catch {
            throw WebhookError(description: "cannot start \(arguments[0]): \(error)")
        }
        // The program may not read its input: a closed pipe must not kill the daemon (SIGPIPE is ignored).
        let writer = input.fileHandleForWriting
        try? writer.write(contentsOf: Data(body))
        try? writer.close()
        let timeout = self.timeout
        let status = await withTaskGroup(of: Int32?.self) { group in
            group.addTask {
                var iterator = exited.stream.makeAsyncIterator()
                return await iterator.next()
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(timeout))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        let said = String(decoding: output.fileHandleForReading.availableData.prefix(2_048), as: UTF8.self)
        guard let status else {
            process.terminate()
            throw WebhookError(
                description: "\(arguments[0]) did not exit within \(Units.formatDuration(timeout)); killed")
        }
        guard status == 0 else {
            throw WebhookError(
                description:
                    "\(arguments[0]) exited with status \(status)\(said.isEmpty ? "" : ": \(said.trimmingWhitespace())")"
            )
        }
    }
}
