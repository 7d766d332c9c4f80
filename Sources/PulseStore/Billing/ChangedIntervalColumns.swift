import PulseAnalytics

extension ChangedInterval {
    /// From the columns of a `bill_change` row joined with its bucket, as both stores select them: series, start, rx,
    /// tx, covered, unknown, revision, measured, flagged (the change), then rx, tx, covered, measured and flagged now.
    package init(columns c: [Int64]) {
        self.init(
            series: c[0], start: c[1],
            now: IntervalFigures(rx: c[9], tx: c[10], covered: c[11], measured: c[12], flagged: c[13]),
            since: IntervalFigures(rx: c[2], tx: c[3], covered: c[4], measured: c[7], flagged: c[8]),
            unknown: Int(c[5]), revision: c[6])
    }
}
