import Logging
import NIOPosix
import PulseCore

/// Writes the batches the sampling loop closes into the spool, on a thread of its own: a spool write ends with two
/// fsyncs, which a slow or failing disk can hold for seconds, and sampling must go on meanwhile. Batches wait in
/// the pipeline (bounded) until written; the sender sees them once they are durable.
struct SpoolWriter: Sendable {
    let pipeline: AgentPipeline
    let clock: WallClock
    let logger: Logger

    /// Writes until ``AgentPipeline/finishWrites()`` was called and every waiting batch is written.
    func run() async {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        var trouble = WriteTrouble()
        while let job = await pipeline.nextWrite() {
            switch job {
            case .batch(let write):
                do {
                    try await pool.runIfActive { try write.perform() }
                    await pipeline.written(write)
                    trouble.worked(logger: logger, now: clock.now())
                } catch {
                    trouble.failed(
                        "cannot write batch \(write.sequence) to the spool", error, logger: logger, now: clock.now())
                    await pipeline.writeFailed(write)
                }
            case .orders(let renewal):
                // A failure here is said by the sampling loop if it persists until the reservation runs out.
                let written = (try? await pool.runIfActive { try renewal.perform() }) != nil
                await pipeline.renewed(renewal, written: written)
            }
        }
        try? await pool.shutdownGracefully()
    }
}
