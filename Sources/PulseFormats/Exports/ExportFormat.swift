import PulseAnalytics
import PulseCore
import PulseQuery

/// The rows of `netpulse export`, as CSV (RFC 4180) or JSON objects: raw samples, and rollup buckets with the
/// counts whose time could not be placed.
public enum ExportFormat {
    /// The columns of raw samples' CSV.
    public static let sampleColumns =
        ["agent", "interface", "timestamp_utc", "timestamp_ms", "batch_order", "boot_id", "ifindex", "width"]
        + Counter.allCases.map(\.name)

    /// One raw sample of interface `record` as a CSV row.
    public static func sampleCSV(_ sample: RawSample, of record: SeriesRecord) -> String {
        CSVText.row(
            [
                record.agent ?? "", record.interface?.description ?? "", RFC3339.text(sample.timestamp),
                "\(sample.timestamp)", "\(sample.order)", sample.epoch.bootID.description, "\(sample.epoch.ifindex)",
                "\(sample.epoch.width.rawValue)",
            ] + sample.counters.values.map { "\($0)" })
    }

    /// One raw sample of interface `record` as a JSON object.
    public static func sampleJSON(_ sample: RawSample, of record: SeriesRecord) -> String {
        JSONText.object([
            ("series", FigureFormat.seriesJSON(record)),
            ("timestamp", JSONText.string(RFC3339.text(sample.timestamp))),
            ("timestamp_ms", "\(sample.timestamp)"), ("batch_order", "\(sample.order)"),
            (
                "epoch",
                JSONText.object([
                    ("boot_id", JSONText.string(sample.epoch.bootID.description)),
                    ("ifindex", "\(sample.epoch.ifindex)"), ("width", "\(sample.epoch.width.rawValue)"),
                ])
            ),
            ("counters", JSONText.object(Counter.allCases.map { ($0.name, "\(sample.counters[$0])") })),
        ])
    }

    /// The columns of buckets: `row` is `bucket`, or `unplaced` for a series' counts received on one UTC day whose
    /// time could not be placed.
    public static let bucketColumns =
        ["kind", "series", "start_utc", "start_ms", "width_seconds"] + TrafficCounter.allCases.map(\.name) + [
            "measured_ms", "interpolated_ms", "peak_rx_bytes_per_second", "peak_tx_bytes_per_second",
            "speed_mbps", "epochs", "wraps", "resets", "implausible", "clock_steps", "ambiguous", "revision",
            "row", "flagged_ms",
        ]

    /// A row's fields, as ``bucketColumns`` names them.
    public static func bucketFields(_ row: ExportRow, of record: SeriesRecord) -> [String] {
        let values = row.values
        return [record.kind.name, record.name, RFC3339.text(row.start), "\(row.start)", "\(row.width / 1_000)"]
            + TrafficCounter.allCases.map { "\(values.traffic[$0])" }
            + [
                "\(values.measuredMilliseconds)", "\(values.interpolatedMilliseconds)", "\(values.peakRx)",
                "\(values.peakTx)", "\(values.speedMbps)",
            ]
            + StepEvents.columns.map { "\(values.count(of: $0))" }
            + ["\(row.revision)", row.kind.rawValue, "\(values.flaggedMilliseconds)"]
    }

    public static func bucketCSV(_ row: ExportRow, of record: SeriesRecord) -> String {
        CSVText.row(bucketFields(row, of: record))
    }

    /// A row as a JSON object: the kind, series, start and row as strings, the rest numbers.
    public static func bucketJSON(_ row: ExportRow, of record: SeriesRecord) -> String {
        JSONText.object(
            zip(bucketColumns, bucketFields(row, of: record)).enumerated().map { index, pair in
                (pair.0, index < 3 || pair.0 == "row" ? JSONText.string(pair.1) : pair.1)
            })
    }
}
