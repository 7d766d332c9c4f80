import PulseAnalytics
import PulseCore

/// Takes a stored batch in for counting: checks it, moves it by the clock check (`docs/windows.md`, "Clocks"), files
/// its raw samples and its interfaces' link facts, and gives each logical interface's samples in tick order for
/// ``StepCounter``.
struct BatchIntake {
    let settings: StoreSettings

    /// One logical interface's samples of a batch (two epochs in one batch are counted together), in tick order.
    struct Interface {
        var name: InterfaceName
        var series: Int64
        var samples: [StepSample]
    }

    struct Samples {
        var interfaces: [Interface]
        /// The earliest and latest sample times that cannot be placed, if any.
        var unplacedTimes: (from: Int64, to: Int64)?
    }

    /// The batch's samples by interface, after its raw samples and link facts were written.
    ///
    /// - Throws: ``StoreError/invalidBatch(_:)`` for a batch the connection would have refused (a journal of an
    ///   older daemon was not checked), and what the transaction throws.
    func read(
        _ batch: IngestBatch, agent: StoreWriter.AgentRow, receivedAt now: Int64, catalogue: inout SeriesCatalogue,
        commit: inout PendingCommit, in db: some IngestTransaction
    ) async throws -> Samples {
        if let why = BatchRules.violation(
            sequence: batch.sequence, order: batch.order, droppedBefore: batch.droppedBefore,
            lastTimestamp: batch.lastTimestamp)
        {
            throw StoreError.invalidBatch(why)
        }
        for section in batch.sections {
            guard section.timestamps.allSatisfy({ $0 >= 0 && $0 <= BatchRules.latestTimestamp }) else {
                throw StoreError.invalidBatch("batch \(batch.sequence) has a timestamp out of range")
            }
        }
        let order = Int64(batch.order)
        let clock = ClockCheck(lastTimestamp: batch.lastTimestamp, receivedAt: now, settings: settings)
        let shift = clock.shift
        if shift != 0 {
            commit.anomalies.append(
                Anomaly(
                    series: 0, timestamp: now, kind: "clock-ahead",
                    detail:
                        "agent \(agent.identity.name): batch \(batch.order) ended \(Units.formatDuration(-shift)) ahead of the daemon's clock; moved back"
                ))
        } else if clock.tooFarAhead {
            commit.anomalies.append(
                Anomaly(
                    series: 0, timestamp: now, kind: "clock-ahead",
                    detail:
                        "agent \(agent.identity.name): batch \(batch.order) ended \(Units.formatDuration(clock.ahead)) ahead of the daemon's clock, more than [ingest] max_skew: not moved, its samples from the future are unplaced"
                ))
        }
        // Sections of one logical interface (two epochs in one batch) are counted together, by tick.
        var byName = [InterfaceName: [StepSample]]()
        var names = [(name: InterfaceName, series: Int64)]()
        var raw = RawBatch()
        var unplacedTimes: (from: Int64, to: Int64)?
        for section in batch.sections {
            let name = section.descriptor.name
            let seriesID = try await catalogue.seriesID(
                .interface, agent: agent.id, name: name.bytes, at: now, commit: &commit, in: db)
            let epoch = try await catalogue.epochID(section.descriptor.epoch, in: db)
            raw.append(series: seriesID, epoch: epoch, firstTick: section.ticks[0], chunk: section.chunk)
            if byName[name] == nil { names.append((name, seriesID)) }
            var link = 0
            var current: LinkState?
            var samples = byName[name] ?? []
            samples.reserveCapacity(samples.count + section.ticks.count)
            for (index, tick) in section.ticks.enumerated() {
                while link < section.links.count, section.links[link].tick <= tick {
                    current = section.links[link].state
                    link += 1
                }
                let time = section.timestamps[index] + shift
                let placeable = clock.placeable(time)
                if !placeable {
                    unplacedTimes = (min(unplacedTimes?.from ?? time, time), max(unplacedTimes?.to ?? time, time))
                }
                samples.append(
                    StepSample(
                        order: order, tick: tick, time: time, epoch: epoch, width: section.descriptor.epoch.width,
                        counters: section.traffic[index], interval: batch.interval, heartbeat: batch.heartbeat,
                        speed: current?.speedMbps ?? 0, kind: current?.kind ?? .unknown,
                        relation: current?.relation ?? [], clockShifted: shift != 0, placeable: placeable,
                        received: now, epochBegan: section.descriptor.began.map { Saturating.sum($0, shift) }))
            }
            byName[name] = samples
            if let latest = section.links.last {
                let index = section.ticks.firstIndex(of: latest.tick) ?? 0
                try await catalogue.updateFacts(
                    seriesID, latest.state, at: section.timestamps[index] + shift, commit: &commit, in: db)
            }
        }
        let times = batch.sections.flatMap { [$0.timestamps[0], $0.timestamps[$0.timestamps.count - 1]] }
        let rawTo = (times.max() ?? 0) + shift
        // Raw samples are kept by time, for `[retention] raw`: a batch that ends at a time that cannot be placed
        // (1970, the far future) keeps none, or it would be filed under days retention never reaches (and on
        // PostgreSQL make a partition for each); its counts are in the unplaced totals.
        if clock.placeable(rawTo) {
            try await db.insertRaw(
                raw, agent: agent.id, order: order, shift: shift, interval: batch.interval, heartbeat: batch.heartbeat,
                from: (times.min() ?? 0) + shift, to: rawTo)
        }
        var interfaces = [Interface]()
        interfaces.reserveCapacity(names.count)
        for (name, series) in names {
            var samples = byName.removeValue(forKey: name)!
            if samples.count > 1 { samples.sort { $0.tick < $1.tick } }
            interfaces.append(Interface(name: name, series: series, samples: samples))
        }
        return Samples(interfaces: interfaces, unplacedTimes: unplacedTimes)
    }

    /// The anomaly that says `steps` steps of the batch on `interfaces` interfaces could not be placed in time.
    static func unplacedAnomaly(
        steps: Int64, interfaces: Int, of batch: IngestBatch, agent: StoreWriter.AgentRow,
        times: (from: Int64, to: Int64)?, receivedAt now: Int64
    ) -> Anomaly {
        let span = times.map { " (samples from \(RFC3339.text($0.from)) to \(RFC3339.text($0.to)))" } ?? ""
        return Anomaly(
            series: 0, timestamp: now, kind: "unplaced",
            detail:
                "agent \(agent.identity.name): \(steps) step(s) of batch \(batch.order) on \(interfaces) interface(s) could not be placed in time\(span): counted as unplaced ([ingest] max_age, max_skew)"
        )
    }
}
