import PulseCore

/// Bytes on the wire per interface per tick, framing, headers and timestamps included, for a connection carrying
/// 16 interfaces sampled at 1 Hz in batches of `batchSeconds`.
enum WireSize {
    static func measure(_ model: TrafficModel, batchSeconds: Int, suppressIdle: Bool = false, interfaces: Int = 16)
        -> Double
    {
        let batches = max(1, 600 / batchSeconds)
        let ticks = batches * batchSeconds
        let series = (0..<interfaces).map { model.samples(ticks, seed: UInt64($0 + 1)) }
        let timestamps = tickTimestamps(ticks, start: 1_763_800_000_000, seed: 9)
        var references: ReferenceTable? = ReferenceTable()
        var total = 0
        for batch in 0..<batches {
            let range = batch * batchSeconds..<(batch + 1) * batchSeconds
            var sections = [BatchSection]()
            for (index, samples) in series.enumerated() {
                // With suppression an idle interface is sent once a minute (the default heartbeat).
                let ticks = suppressIdle ? range.filter { $0 % 60 == 0 } : Array(range)
                guard !ticks.isEmpty else { continue }
                sections.append(
                    BatchSection(
                        descriptorID: UInt32(index), ticks: ticks.map { $0 - range.lowerBound },
                        values: ticks.flatMap { samples[$0].values }))
            }
            let frame = WireBatch(
                stream: 0x1234_5678_9ABC_DEF0, sequence: UInt64(batch + 1), timestamps: Array(timestamps[range]),
                sections: sections)
            total += WireCodec.encode(.batch(frame), references: &references).count
        }
        return Double(total) / Double(ticks * interfaces)
    }

    static func report() {
        print("wire bytes per interface per tick (16 interfaces, 1 Hz, one connection, framing included)")
        print("  traffic                      5 s batch   10 s batch   30 s batch   60 s batch")
        for model in TrafficModel.allCases {
            let figures = [5, 10, 30, 60].map { Units.fixed(measure(model, batchSeconds: $0), decimals: 2) }
            print("  \(model.rawValue.padding(26))" + figures.map { $0.leftPadding(12) }.joined(separator: " "))
        }
        let suppressed = [5, 10, 30, 60].map {
            Units.fixed(measure(.idle, batchSeconds: $0, suppressIdle: true), decimals: 2)
        }
        print(
            "  \("idle, suppressed (default)".padding(26))"
                + suppressed.map { $0.leftPadding(12) }.joined(separator: " "))
        // For scale: the same 16 counters as Prometheus remote-write samples, about 50 bytes each.
        print("  (Prometheus remote write: about 50 bytes per sample, i.e. ~800 bytes for these 16 counters)")
    }
}

extension String {
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
    func leftPadding(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
