/// Runs code written once for every backend, which is `async` because PostgreSQL's client is, inside a SQLite
/// transaction, which GRDB gives as a synchronous closure (a SQLite connection is never held across a suspension).
///
/// The shared code (the counting writer, the bill and forward passes' reads, virtual gaps) does its I/O only through
/// protocols whose SQLite witnesses are synchronous, so on SQLite it never suspends: `Task.immediate` runs it to its
/// end on the calling thread, on the transaction's connection, before ``run(_:)`` returns. The alternative, each
/// backend with its own copy of the writer, is what the shared code exists to avoid.
///
/// A suspension would mean the code awaited something other than the store (an actor, a sleep): that is a bug in
/// the shared code, and the process stops at once with what happened rather than let the task run on later against
/// a connection and a stack that are gone. The tests drive every shared path on SQLite.
package enum InlineAsync {
    package static func run<Value>(_ operation: () async throws -> Value) throws -> Value {
        try withoutActuallyEscaping(operation) { operation in
            let outcome = Outcome<Value>()
            nonisolated(unsafe) let operation = operation
            Task.immediate {
                do {
                    outcome.result = .success(try await operation())
                } catch {
                    outcome.result = .failure(error)
                }
            }
            guard let result = outcome.result else {
                fatalError("store code shared by the backends suspended inside a SQLite transaction (InlineAsync)")
            }
            return try result.get()
        }
    }

    /// Where the task leaves its result. Unchecked because it is mutable, and safe because the task writes it on the
    /// calling thread before `Task.immediate` returns, and ``run(_:)`` reads it only after (never while the task runs
    /// elsewhere: a task that suspended stops the process first).
    private final class Outcome<Value>: @unchecked Sendable {
        var result: Result<Value, any Error>?
    }
}
