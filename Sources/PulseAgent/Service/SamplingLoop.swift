import Logging
import PulseCore

/// Samples on wall-clock-aligned ticks, suppresses idle interfaces, batches, and stores closed batches in the
/// spool. When its task is cancelled (the agent is stopping) it closes the open batch into the spool, so nothing
/// sampled is lost.
public struct SamplingLoop: Sendable {
    let settings: AgentSettings
    let pipeline: AgentPipeline
    let logger: Logger
    let stream: UInt64
    /// Dates the ticks (which fall on its whole intervals).
    let clock: WallClock
    let faults: FaultPoints
    let heartbeat: LoopHeartbeat

    public init(
        settings: AgentSettings, pipeline: AgentPipeline, stream: UInt64, clock: WallClock, faults: FaultPoints,
        logger: Logger, heartbeat: LoopHeartbeat = LoopHeartbeat("sampling")
    ) {
        self.settings = settings
        self.pipeline = pipeline
        self.stream = stream
        self.clock = clock
        self.faults = faults
        self.logger = logger
        self.heartbeat = heartbeat
    }

    /// Runs until its task is cancelled, then flushes.
    public func run(sampler initial: Sampler) async {
        var sampler = initial
        var config = settings.config
        var suppressor = IdleSuppressor(heartbeat: config.idleHeartbeat)
        var batcher = Batcher(stream: stream)
        var generator = SystemRandomNumberGenerator()
        // A random first deadline spreads the flushes of agents that started together. Deadlines and the link-state
        // period run on the monotonic clock: a wall clock that steps back an hour must not hold batches for an hour.
        var batchDeadline =
            MonotonicMilliseconds.now()
            + Int64.random(in: config.batchInterval / 2...config.batchInterval, using: &generator)
        var lastLinkRead: Int64?
        var lastTick: Int64 = .min
        var reportedFailure = false
        var trouble = WriteTrouble()
        // The interval and heartbeat every tick of the open batch was sampled with (a batch declares one of each).
        var batchSettings = (interval: config.sampleInterval, heartbeat: config.idleHeartbeat)

        while !Task.isCancelled {
            config = settings.config
            suppressor.heartbeat = config.idleHeartbeat
            if sampler.filter != config.filter { sampler.filter = config.filter }
            let pace = await pipeline.pace
            let interval = config.sampleInterval * Int64(pace.sampleFactor)
            let now = clock.now()
            let wait = (now / interval + 1) * interval - now
            heartbeat.beat(within: wait + interval)
            do {
                try await Task.sleep(for: .milliseconds(wait))
            } catch {
                break
            }
            faults.stallIfRequested(.sampling)

            let timestamp = clock.now()
            if timestamp <= lastTick {
                // The wall clock stepped back: a batch's timestamps must increase, so close this one.
                await flush(&batcher, batchSettings, &trouble)
            }
            if batchSettings != (interval, config.idleHeartbeat) {
                // A PACE or a reload changed how often we sample: the open batch keeps the settings it was made with.
                await flush(&batcher, batchSettings, &trouble)
                batchSettings = (interval, config.idleHeartbeat)
            }
            lastTick = timestamp
            let elapsed = MonotonicMilliseconds.now()
            let readLinks = lastLinkRead.map { elapsed - $0 >= config.linkStateInterval } ?? true
            if readLinks { lastLinkRead = elapsed }
            let tick: TickSample
            do {
                tick = try sampler.sample(at: timestamp, readLinkState: readLinks)
                for (name, why) in sampler.takeRefused() {
                    logger.warning("not sampling interface \(name): \(why), which the protocol refuses")
                }
                if reportedFailure { logger.notice("sampling works again") }
                reportedFailure = false
            } catch {
                if !reportedFailure { logger.error("cannot sample interface counters: \(error)") }
                reportedFailure = true
                continue
            }
            await pipeline.sampled(interfaces: tick.interfaces.count, at: timestamp)
            // Never past the protocol's limits: a tick that does not fit closes the batch, and a host with more
            // interfaces than one batch may carry spreads its tick over several.
            var items = suppressor.filter(tick)[...]
            while !items.isEmpty {
                let room = batcher.room(within: .standard, maximumSamples: config.batchMaximumSamples)
                guard room > 0 else {
                    await flush(&batcher, batchSettings, &trouble)
                    continue
                }
                batcher.add(Array(items.prefix(room)))
                items = items.dropFirst(room)
            }

            if batcher.sampleCount >= config.batchMaximumSamples || elapsed >= batchDeadline {
                await flush(&batcher, batchSettings, &trouble)
                let base = Double(config.batchInterval * Int64(pace.batchFactor))
                let jitter =
                    config.batchJitter > 0
                    ? Double.random(in: -config.batchJitter...config.batchJitter, using: &generator) : 0
                batchDeadline = elapsed + Int64(base * (1 + jitter))
            }
        }
        heartbeat.finish()
        await flush(&batcher, batchSettings, &trouble)
    }

    private func flush(
        _ batcher: inout Batcher, _ settings: (interval: Int64, heartbeat: Int64), _ trouble: inout WriteTrouble
    ) async {
        guard !batcher.isEmpty else { return }
        let drops = await pipeline.takeUnreportedDrops()
        let record: SpoolRecord
        do {
            let order = try await pipeline.nextOrder()
            record = batcher.flush(
                droppedBefore: drops, order: order, interval: settings.interval, heartbeat: settings.heartbeat)!
        } catch {
            // Without a reserved order the batch cannot be stored: it is lost, counted and reported like a dropped
            // one. Keeping it would grow it past its limits, and a tick that does not fit would never find room.
            batcher.discard()
            trouble.failed(
                "cannot reserve batch orders in the state directory", error, logger: logger, now: clock.now())
            await pipeline.restoreUnreportedDrops(drops + 1)
            return
        }
        trouble.worked(logger: logger, now: clock.now())
        // Returns at once: the spool writer writes it (a slow disk must not delay sampling).
        await pipeline.store(record)
    }
}

/// Failures to store batches (a full or failing disk under the state directory), by the sampling loop (orders) and
/// the spool writer (batches): said when they start and when they end, with how many batches were lost in between, rather than once per batch. The lost batches are counted
/// and reported to the daemon in the next stored batch (`droppedBefore`), so the hole shows in its coverage.
struct WriteTrouble {
    var since: Int64?
    var lost = 0

    mutating func failed(_ what: String, _ error: any Error, logger: Logger, now: Int64) {
        lost += 1
        guard since == nil else { return }
        since = now
        logger.error(
            "\(what): \(error); batches are lost until it works again (counted, and reported to the daemon)")
    }

    mutating func worked(logger: Logger, now: Int64) {
        guard let since else { return }
        logger.notice(
            "batches are stored again after \((now - since) / 1_000) s; \(lost) batch(es) lost meanwhile")
        self.since = nil
        lost = 0
    }
}
