/// Read access to rollups, as the window engine needs it; the store implements it (one query per call).
public protocol RollupReader: Sendable {
    /// The buckets of `series` at `level` whose start lies in `[from, to)`, oldest first, by series.
    func buckets(level: RollupLevel, series: [Int64], from: Int64, to: Int64) async throws -> [Int64: [Bucket]]

    /// Each series' buckets of `level` in `[from, to)` merged into one (sums added, peaks and speed the largest);
    /// every series when `series` is nil. Series without buckets there are left out.
    func sums(level: RollupLevel, series: [Int64]?, from: Int64, to: Int64) async throws -> [Int64: BucketValues]
}
