/// Read access to rollups, as the window engine needs it; the store implements it (one query per call).
public protocol RollupReader: Sendable {
    /// The buckets of `series` at `level` whose start lies in `[from, to)`, oldest first, by series.
    func buckets(level: RollupLevel, series: [Int64], from: Int64, to: Int64) async throws -> [Int64: [Bucket]]

    /// Each series' buckets of `level` in `[from, to)`, oldest first, handed to `reduce` one series at a time and
    /// dropped once it returns; what it returns is kept (nil: nothing). Only `fields` are sure to be read. A
    /// ranking of ten thousand interfaces by 95th percentile over a week reads twenty million buckets, which must
    /// not all be held at once.
    func reduceBuckets<Result: Sendable>(
        level: RollupLevel, series: [Int64], from: Int64, to: Int64, fields: BucketFields,
        _ reduce: @escaping @Sendable (Int64, [Bucket]) -> Result?
    ) async throws -> [Int64: Result]

    /// Each series' buckets of `level` in `[from, to)` merged into one (sums added, peaks and speed the largest);
    /// every series when `series` is nil. Series without buckets there are left out. Only `fields` are sure to be
    /// read (the others may be zero): a ranking by bytes need not add up twenty columns.
    func sums(
        level: RollupLevel, series: [Int64]?, from: Int64, to: Int64, fields: BucketFields
    ) async throws -> [Int64: BucketValues]
}

/// Groups of a bucket's columns, for reads that need only some.
extension RollupReader {
    /// Every field of the buckets, kept as they are.
    public func buckets(level: RollupLevel, series: [Int64], from: Int64, to: Int64) async throws -> [Int64: [Bucket]] {
        try await reduceBuckets(level: level, series: series, from: from, to: to, fields: .all) { $1 }
    }

    /// Every field of the sums.
    public func sums(level: RollupLevel, series: [Int64]?, from: Int64, to: Int64) async throws -> [Int64: BucketValues]
    {
        try await sums(level: level, series: series, from: from, to: to, fields: .all)
    }
}

public struct BucketFields: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let bytes = BucketFields(rawValue: 1 << 0)
    /// Packets, errors and drops.
    public static let packets = BucketFields(rawValue: 1 << 1)
    /// Measured and interpolated time.
    public static let coverage = BucketFields(rawValue: 1 << 2)
    /// Peaks and link speed.
    public static let peaks = BucketFields(rawValue: 1 << 3)
    /// Event counts, and the time of implausible steps.
    public static let events = BucketFields(rawValue: 1 << 4)
    public static let revision = BucketFields(rawValue: 1 << 5)
    /// Member time and capacity (a scope's coverage and utilisation).
    public static let members = BucketFields(rawValue: 1 << 6)

    public static let all: BucketFields = [.bytes, .packets, .coverage, .peaks, .events, .members, .revision]

    /// Whether the rollup column at `index` of the bucket columns (bytes, packets, errors, drops, times, peaks,
    /// speed, events, flagged time, member time, capacity, revision) is one of these fields.
    public func includes(column index: Int) -> Bool {
        let events = 13 + StepEvents.columns.count
        switch index {
        case 0..<2: return contains(.bytes)
        case 2..<8: return contains(.packets)
        case 8..<10: return contains(.coverage)
        case 10..<13: return contains(.peaks)
        // The event counts and the flagged time.
        case 13...events: return contains(.events)
        case (events + 1)...(events + 2): return contains(.members)
        default: return contains(.revision)
        }
    }
}
