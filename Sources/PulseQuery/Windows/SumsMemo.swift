import PulseAnalytics
import Synchronization

/// Sums one drawing of a dashboard page has already read, so its panels share them: the page's coverage line, its
/// top talkers and its busiest interfaces each summed the same 10,000 interfaces over the same range
/// (docs/benchmarks.md, Dashboards). Held for one page; sums of a series do not depend on which others are read
/// with it, so a panel asking for some of them gets exactly what a read of its own would give.
public final class SumsMemo: Sendable {
    /// What is read whenever the memo reads: every field the panels ask for (the others pass through unshared). The
    /// panels ask for these, not fewer, so that what the memo holds is handed over without being masked and copied.
    static let fields: BucketFields = [.bytes, .coverage, .peaks]

    private struct Key: Hashable {
        var from: Int64
        var to: Int64
        var now: Int64
    }

    /// The sums read for one window: each read's as it came (a page's top hosts, then its 10,000 interfaces), not
    /// merged into one dictionary, which copied and hashed them all again.
    private struct Entry {
        var read = Set<Int64>()
        var parts = [[Int64: BucketValues]]()

        func sums(_ id: Int64) -> BucketValues? {
            for part in parts { if let values = part[id] { return values } }
            return nil
        }
    }

    private let entries = Mutex<[Key: Entry]>([:])

    public init() {}

    /// `ids`' sums over `window` at `now` with `fields`: those already read from here, the rest by `read` (with the
    /// memo's fields) and kept.
    func sums(
        _ ids: [Int64], window: Window, now: Int64, fields: BucketFields,
        read: ([Int64], BucketFields) async throws -> [Int64: BucketValues]
    ) async throws -> [Int64: BucketValues] {
        guard Self.fields.isSuperset(of: fields) else { return try await read(ids, fields) }
        let key = Key(from: window.from, to: window.to, now: now)
        let missing = entries.withLock { entries in
            let read = entries[key]?.read ?? []
            return Set(ids.lazy.filter { !read.contains($0) })
        }
        if !missing.isEmpty {
            let fresh = try await read(Array(missing), Self.fields)
            entries.withLock { entries in
                entries[key, default: Entry()].read.formUnion(missing)
                entries[key, default: Entry()].parts.append(fresh)
            }
            // A read that shares nothing with an earlier one, asking for the memo's own fields: the store's sums as
            // they came, not copied into another dictionary of 10,000.
            if missing.count == ids.count, fields == Self.fields { return fresh }
        }
        return entries.withLock { entries in
            var result = [Int64: BucketValues]()
            guard let entry = entries[key] else { return result }
            result.reserveCapacity(ids.count)
            for id in ids {
                if let values = entry.sums(id) { result[id] = values.only(fields) }
            }
            return result
        }
    }
}
