import PulseAnalytics
import PulseCore
import PulseQuery
import PulseStore

/// One pass of remote write read from one snapshot of the store (`docs/remote-write.md`): for every interface,
/// the buckets of the finest level between the forward cursor and `to`, as samples of four series:
///
/// - `netpulse_interface_receive_bytes_total` and `…_transmit_bytes_total`: the bytes counted since the interface
///   was first seen, at the end of each bucket. They never go down: wraps, resets, reboots and re-created
///   interfaces are counted as the daemon counts them (`docs/windows.md`), which a Prometheus counter scraped
///   from node_exporter cannot do.
/// - `netpulse_interface_receive_bits_per_second` and `…_transmit_…`: each bucket's average rate.
///
/// Late data for buckets already forwarded (a replayed spool) cannot be sent at its time (a receiver refuses a
/// sample older than its series' newest), so its bytes are added to the next sample of the counter (one at the end
/// of the pass when the interface has no new bucket): the counter stays exact and the late bytes show at the time
/// they arrived. A change that cannot be told in bytes (a
/// virtual gap came or went) has the interface's bytes before the cursor added up again; when that total is less
/// than what was sent (bytes moved to later buckets), the counter holds its value until the total passes it.
struct RemoteWritePass {
    /// The series to send, one entry per interface and metric, samples oldest first.
    var series: [RemoteSeries] = []
    var update: ForwardUpdate
    /// Late bytes added to a later sample, and interfaces whose bytes were added up again.
    var lateBytes: Int64 = 0
    var recounted = 0

    static let counterNames = (
        rx: "netpulse_interface_receive_bytes_total", tx: "netpulse_interface_transmit_bytes_total"
    )
    static let rateNames = (
        rx: "netpulse_interface_receive_bits_per_second", tx: "netpulse_interface_transmit_bits_per_second"
    )

    /// An agent's label key as a Prometheus label name: `-` (which agents may use) becomes `_`, and a name that
    /// starts with a digit or with `__` (reserved for Prometheus) gets a `_` or loses one.
    static func labelName(_ key: String) -> String {
        var name = key.replacingOccurrences(of: "-", with: "_")
        if name.first?.isNumber == true { name = "_" + name }
        while name.hasPrefix("__") { name.removeFirst() }
        return name
    }

    /// The series in requests of at most `limit` samples, a series never split (its samples stay in order).
    func requests(limit: Int) -> [[RemoteSeries]] {
        var requests = [[RemoteSeries]]()
        var current = [RemoteSeries]()
        var samples = 0
        for entry in series {
            if samples + entry.samples.count > limit && !current.isEmpty {
                requests.append(current)
                current = []
                samples = 0
            }
            current.append(entry)
            samples += entry.samples.count
        }
        if !current.isEmpty { requests.append(current) }
        return requests
    }
}

extension RemoteWritePass {
    /// Reads the pass from `snapshot`: the buckets in `[from, to)`, where `from` is the snapshot's cursor, or where
    /// a new receiver starts when nothing was sent yet (the last stretch, not the store's whole history).
    init(snapshot: any ForwardSnapshot, catalogue: Catalogue, from: Int64, to: Int64) async throws {
        let level = snapshot.level
        guard snapshot.cursor == 0 || snapshot.cursor == from else {
            throw StoreError.unusable("the forward cursor moved during a pass (is a second daemon forwarding?)")
        }
        let interfaces = catalogue.interfaces
        var states = try await snapshot.states()
        let changes = try await snapshot.changes(cursor: from, limit: 1_000_000)
        // Only the changes of interfaces this pass counts are settled: a series made after the catalogue was read
        // keeps its rows for the next pass.
        let counted = Set(interfaces.map(\.id))
        // A pass with nothing to send settles nothing either: its late changes wait for one that adds them.
        update = ForwardUpdate(states: [], cursor: from, settled: [])
        guard to > from else { return }
        update = ForwardUpdate(states: [], cursor: to, settled: changes.filter { counted.contains($0.series) })

        // Late data before the cursor; changes at or after it are in the buckets this snapshot reads.
        var late = [Int64: (rx: Int64, tx: Int64, unknown: Bool)]()
        for change in changes where change.start < from {
            var entry = late[change.series] ?? (0, 0, false)
            entry.rx += change.rx
            entry.tx += change.tx
            entry.unknown = entry.unknown || change.unknown > 0
            late[change.series] = entry
        }
        var buckets = [Int64: [Bucket]]()
        try await snapshot.buckets(series: interfaces.map(\.id), from: from, to: to) { buckets[$0] = $1 }

        let labelsByAgent = Dictionary(
            catalogue.agents.map { ($0.name, $0.labels) }, uniquingKeysWith: { first, _ in first })
        let seconds = Double(level.width) / 1_000
        for interface in interfaces {
            var state: ForwardState
            let change = late[interface.id]
            let saved = states.removeValue(forKey: interface.id)
            if let saved, change?.unknown != true {
                state = saved
                state.countedRx += change?.rx ?? 0
                state.countedTx += change?.tx ?? 0
                lateBytes += (change?.rx ?? 0) + (change?.tx ?? 0)
            } else {
                let total = try await snapshot.total(series: interface.id, before: from)
                let sent = saved
                if sent != nil { recounted += 1 }
                state = ForwardState(
                    series: interface.id, countedRx: total.rx, countedTx: total.tx, sentRx: sent?.sentRx ?? 0,
                    sentTx: sent?.sentTx ?? 0)
            }
            var counters = (rx: [(timestamp: Int64, value: Double)](), tx: [(timestamp: Int64, value: Double)]())
            var rates = counters
            for bucket in buckets[interface.id] ?? [] where bucket.start >= from && bucket.start < to {
                let rx = bucket.values.traffic[.rxBytes]
                let tx = bucket.values.traffic[.txBytes]
                state.countedRx += rx
                state.countedTx += tx
                state.sentRx = max(state.sentRx, state.countedRx)
                state.sentTx = max(state.sentTx, state.countedTx)
                let end = bucket.start + level.width
                counters.rx.append((end, Double(state.sentRx)))
                counters.tx.append((end, Double(state.sentTx)))
                rates.rx.append((end, Double(rx) * 8 / seconds))
                rates.tx.append((end, Double(tx) * 8 / seconds))
            }
            // Late bytes of an interface that sent nothing since: a sample at the end of the pass carries them, so
            // an interface that went quiet still ends with its exact count.
            if counters.rx.isEmpty && (state.countedRx > state.sentRx || state.countedTx > state.sentTx) {
                state.sentRx = max(state.sentRx, state.countedRx)
                state.sentTx = max(state.sentTx, state.countedTx)
                counters.rx.append((to, Double(state.sentRx)))
                counters.tx.append((to, Double(state.sentTx)))
            }
            update.states.append(state)
            guard !counters.rx.isEmpty else { continue }
            var labels = [String: String]()
            if let agent = interface.agent {
                for pair in labelsByAgent[agent]?.pairs ?? [] { labels[Self.labelName(pair.key)] = pair.value }
                labels["agent"] = agent
            }
            labels["interface"] = interface.interface?.description ?? ""
            for (name, samples) in [
                (Self.counterNames.rx, counters.rx), (Self.counterNames.tx, counters.tx),
                (Self.rateNames.rx, rates.rx), (Self.rateNames.tx, rates.tx),
            ] where !samples.isEmpty {
                labels["__name__"] = name
                series.append(RemoteSeries(labels: labels, samples: samples))
            }
        }
        // Interfaces no longer in the catalogue keep their saved state (an interface may come back).
    }
}
