import PulseAnalytics
import PulseCore
import PulseQuery

/// How series and figures are written in JSON and CSV, shared by snapshots and the CLI (`docs/snapshots.md`).
public enum FigureFormat {
    /// `{"kind":…,"name":…,"agent":…,"interface":…,"group":…}`.
    public static func seriesJSON(_ series: SeriesRecord) -> String {
        var fields = [("kind", JSONText.string(series.kind.name)), ("name", JSONText.string(series.name))]
        if let agent = series.agent { fields.append(("agent", JSONText.string(agent))) }
        if let interface = series.interface {
            fields.append(("interface", JSONText.string(interface.description)))
            // A name that is not UTF-8 cannot be a JSON string as it is: `interface` is its text form (undecodable bytes
            // as `\xHH`, which InterfaceName(text:) reverses), and its bytes go beside it in hex too.
            if String(validating: interface.bytes, as: UTF8.self) == nil {
                fields.append(
                    (
                        "interface_hex",
                        JSONText.string(interface.bytes.map { Hex.string(UInt64($0), width: 2) }.joined())
                    ))
            }
        }
        if let group = series.group {
            fields.append(("group", JSONText.string(group.description)))
        }
        if let facts = series.facts, series.kind == .interface {
            fields.append(("link_kind", JSONText.string(facts.kind.name)))
            fields.append(("speed_mbps", facts.speedMbps.map { "\($0)" } ?? "null"))
        }
        return JSONText.object(fields)
    }

    public static func windowJSON(_ window: Window, calendar: CivilCalendar, resolution: RollupLevel?) -> String {
        var fields = [
            ("name", JSONText.string(window.name)), ("from", JSONText.string(RFC3339.text(window.from))),
            ("to", JSONText.string(RFC3339.text(window.to))),
            ("from_local", JSONText.string(calendar.localText(window.from))),
            ("to_local", JSONText.string(calendar.localText(window.to))),
        ]
        if let resolution { fields.append(("resolution", JSONText.string(resolution.description))) }
        return JSONText.object(fields)
    }

    private static func pair(_ value: Direction<Int64?>, places: Int) -> String {
        JSONText.object([
            ("rx", JSONText.decimal(value.rx, places: places)), ("tx", JSONText.decimal(value.tx, places: places)),
        ])
    }

    private static func counts(_ values: BucketValues, _ rx: TrafficCounter, _ tx: TrafficCounter) -> String {
        JSONText.object([("rx", "\(values.traffic[rx])"), ("tx", "\(values.traffic[tx])")])
    }

    /// The figures of one series: bytes exact, rates in bytes per second with three decimals, utilisation and
    /// coverage in percent, ratios in parts per million.
    public static func figuresJSON(_ figures: WindowFigures) -> String {
        let totals = figures.totals
        return JSONText.object([
            ("elapsed_ms", "\(figures.elapsed)"),
            ("bytes", counts(totals, .rxBytes, .txBytes)),
            ("packets", counts(totals, .rxPackets, .txPackets)),
            ("errors", counts(totals, .rxErrors, .txErrors)),
            ("dropped", counts(totals, .rxDropped, .txDropped)),
            (
                "rate_bytes_per_second",
                JSONText.object([
                    ("average", pair(figures.average, places: 3)), ("minimum", pair(figures.minimum, places: 3)),
                    ("maximum", pair(figures.maximum, places: 3)), ("last", pair(figures.last, places: 3)),
                    ("p50", pair(figures.p50, places: 3)), ("p95", pair(figures.p95, places: 3)),
                    ("p99", pair(figures.p99, places: 3)), ("peak", pair(figures.peak, places: 3)),
                ])
            ),
            ("utilisation_percent", pair(figures.utilisation, places: 2)),
            ("error_ratio_ppm", JSONText.number(figures.errorRatio)),
            ("drop_ratio_ppm", JSONText.number(figures.dropRatio)),
            ("coverage_percent", JSONText.decimal(figures.coverage, places: 4)),
            ("measured_coverage_percent", JSONText.decimal(figures.measuredCoverage, places: 4)),
            ("buckets_with_data", "\(figures.bucketsWithData)"),
            ("members", "\(figures.members)"),
            (
                "events",
                JSONText.object(
                    zip(["epochs", "wraps", "resets", "implausible", "clock_steps", "ambiguous"], StepEvents.columns)
                        .map {
                            ($0, "\(totals.count(of: $1))")
                        })
            ),
            ("revision", "\(figures.revision)"),
        ])
    }

    /// The CSV header of ``figuresCSV(_:_:)`` rows: every column names its unit.
    public static let figuresCSVHeader: [String] =
        [
            "window", "from_utc", "to_utc", "resolution", "kind", "series", "agent", "interface", "group",
            "rx_bytes", "tx_bytes", "rx_packets", "tx_packets", "rx_errors", "tx_errors", "rx_dropped", "tx_dropped",
        ]
        + ["average", "minimum", "maximum", "last", "p50", "p95", "p99", "peak"].flatMap {
            ["rx_\($0)_bytes_per_second", "tx_\($0)_bytes_per_second"]
        }
        + [
            "rx_utilisation_percent", "tx_utilisation_percent", "error_ratio_ppm", "drop_ratio_ppm",
            "coverage_percent", "measured_coverage_percent", "members", "revision",
        ]

    /// A series' counts whose time could not be placed, received in `received` (`docs/windows.md`, "Time that
    /// cannot be placed"): the eight counters and the number of steps.
    public static func unplacedJSON(_ totals: UnplacedTotals, received: Window?) -> String {
        var fields = [(String, String)]()
        if let received {
            fields.append(("received_from", JSONText.string(RFC3339.text(received.from))))
            fields.append(("received_to", JSONText.string(RFC3339.text(received.to))))
        }
        fields += TrafficCounter.allCases.map { ($0.name, "\(totals.traffic[$0])") }
        fields.append(("steps", "\(totals.steps)"))
        return JSONText.object(fields)
    }

    /// The figures CSV's row of a series' unplaced counts for a window: its `resolution` is `unplaced`, its range
    /// the days they were received on, and only the eight counters are filled.
    public static func unplacedCSV(_ series: SeriesRecord, _ totals: UnplacedTotals, window: Window, received: Window)
        -> [String]
    {
        var fields = [
            window.name, RFC3339.text(received.from), RFC3339.text(received.to), "unplaced", series.kind.name,
            series.name, series.agent ?? "", series.interface?.description ?? "", series.group?.description ?? "",
        ]
        fields += TrafficCounter.allCases.map { "\(totals.traffic[$0])" }
        return fields + Array(repeating: "", count: figuresCSVHeader.count - fields.count)
    }

    public static func figuresCSV(_ series: SeriesRecord, _ figures: WindowFigures) -> [String] {
        let totals = figures.totals
        func rate(_ value: Int64?) -> String { value.map { FixedPoint.text($0, places: 3) } ?? "" }
        var fields = [
            figures.window.name, RFC3339.text(figures.window.from), RFC3339.text(figures.window.to),
            figures.resolution.description, series.kind.name, series.name, series.agent ?? "",
            series.interface?.description ?? "", series.group?.description ?? "",
        ]
        fields += TrafficCounter.allCases.map { "\(totals.traffic[$0])" }
        for pair in [
            figures.average, figures.minimum, figures.maximum, figures.last, figures.p50, figures.p95, figures.p99,
            figures.peak,
        ] {
            fields += [rate(pair.rx), rate(pair.tx)]
        }
        fields += [
            figures.utilisation.rx.map { FixedPoint.text($0, places: 2) } ?? "",
            figures.utilisation.tx.map { FixedPoint.text($0, places: 2) } ?? "",
            figures.errorRatio.map { "\($0)" } ?? "", figures.dropRatio.map { "\($0)" } ?? "",
            FixedPoint.text(figures.coverage, places: 4), FixedPoint.text(figures.measuredCoverage, places: 4),
            "\(figures.members)", "\(figures.revision)",
        ]
        return fields
    }

    /// What a bill rests on (`docs/windows.md`, "95th-percentile billing"): its intervals by class (null for a bill
    /// issued before they were recorded), the rank it took and how.
    static func billBasisJSON(_ bill: Bill) -> [(String, String)] {
        func count(_ value: Int?) -> String { value.map { "\($0)" } ?? "null" }
        return [
            ("intervals", "\(bill.intervals)"), ("missing_intervals", "\(bill.missing)"),
            ("measured_intervals", count(bill.classes?.measured)),
            ("interpolated_intervals", count(bill.classes?.interpolated)),
            ("flagged_intervals", count(bill.classes?.flagged)), ("rank", count(bill.rankPosition)),
            ("rank_rule", JSONText.string(bill.rank.rawValue)),
        ]
    }

    /// A bill's members (``WindowEngine/billMembers(_:)``): counted interfaces, link speed and hosts.
    public static func billMembersJSON(_ members: BillMembers) -> String {
        JSONText.object([
            ("interfaces", "\(members.interfaces)"),
            ("speed_mbps", members.speedMbps > 0 ? "\(members.speedMbps)" : "null"),
            (
                "hosts",
                JSONText.array(
                    members.hosts.map { host in
                        JSONText.object([
                            ("name", JSONText.string(host.name)),
                            ("from", host.from.map { JSONText.string(RFC3339.text($0)) } ?? "null"),
                            ("to", host.to.map { JSONText.string(RFC3339.text($0)) } ?? "null"),
                        ])
                    })
            ),
        ])
    }

    /// A bill's hosts as one line: `db-3 (until 2026-06-08 00:00); web-01 (from 2026-06-08 00:00)`.
    public static func billHostsText(_ members: BillMembers, calendar: CivilCalendar) -> String {
        members.hosts.map { host in
            let span = [
                host.from.map { "from \(calendar.localMinute($0))" },
                host.to.map { "until \(calendar.localMinute($0))" },
            ].compactMap { $0 }
            return TerminalText.safe(host.name) + (span.isEmpty ? "" : " (\(span.joined(separator: " ")))")
        }.joined(separator: "; ")
    }

    /// A bill: the period, the method, the percentiles, and what it rests on (with its members, when read).
    public static func billJSON(_ line: BillLine, calendar: CivilCalendar, members: BillMembers? = nil) -> String {
        let bill = line.bill
        return JSONText.object(
            [
                ("series", seriesJSON(line.series)),
                ("period", windowJSON(bill.period, calendar: calendar, resolution: .fiveMinutes)),
                ("method", JSONText.string(bill.method.rawValue)),
                ("p95_bytes_per_second", JSONText.decimal(bill.value, places: 3)),
                ("p95_bits_per_second", JSONText.decimal(bill.value.map { $0 * 8 }, places: 3)),
                ("p95_in_bytes_per_second", JSONText.decimal(bill.inbound, places: 3)),
                ("p95_out_bytes_per_second", JSONText.decimal(bill.outbound, places: 3)),
                ("p95_sum_bytes_per_second", JSONText.decimal(bill.sum, places: 3)),
            ] + billBasisJSON(bill) + [
                ("as_of", JSONText.string(RFC3339.text(line.asOf))),
                ("issued_at", line.issuedAt.map { JSONText.string(RFC3339.text($0)) } ?? "null"),
                (
                    "adjustments",
                    JSONText.array(
                        line.adjustments.map { adjustment in
                            JSONText.object(
                                [
                                    ("found_at", JSONText.string(RFC3339.text(adjustment.foundAt))),
                                    ("p95_bytes_per_second", JSONText.decimal(adjustment.bill.value, places: 3)),
                                ] + billBasisJSON(adjustment.bill))
                        })
                ),
                ("revision", "\(bill.revision)"),
            ] + (members.map { [("members", billMembersJSON($0))] } ?? []))
    }

    public static let billCSVHeader = [
        "kind", "series", "period_from_utc", "period_to_utc", "method", "p95_bytes_per_second", "p95_bits_per_second",
        "p95_in_bytes_per_second", "p95_out_bytes_per_second", "p95_sum_bytes_per_second", "intervals",
        "missing_intervals", "as_of_utc", "issued_at_utc", "adjusted_p95_bytes_per_second", "revision",
        "measured_intervals", "interpolated_intervals", "flagged_intervals", "rank", "rank_rule",
    ]

    /// The columns `--members` adds to ``billCSVHeader``.
    public static let billMembersCSVHeader = ["members", "members_speed_mbps", "members_hosts"]

    public static func billMembersCSV(_ members: BillMembers?) -> [String] {
        guard let members else { return ["", "", ""] }
        return [
            "\(members.interfaces)", members.speedMbps > 0 ? "\(members.speedMbps)" : "",
            members.hosts.map { host in
                host.name + (host.from.map { " from " + RFC3339.text($0) } ?? "")
                    + (host.to.map { " until " + RFC3339.text($0) } ?? "")
            }.joined(separator: "; "),
        ]
    }

    public static func billCSV(_ line: BillLine) -> [String] {
        let bill = line.bill
        func rate(_ value: Int64?) -> String { value.map { FixedPoint.text($0, places: 3) } ?? "" }
        func count(_ value: Int?) -> String { value.map { "\($0)" } ?? "" }
        return [
            line.series.kind.name, line.series.name, RFC3339.text(bill.period.from), RFC3339.text(bill.period.to),
            bill.method.rawValue, rate(bill.value), rate(bill.value.map { $0 * 8 }), rate(bill.inbound),
            rate(bill.outbound), rate(bill.sum), "\(bill.intervals)", "\(bill.missing)", RFC3339.text(line.asOf),
            line.issuedAt.map(RFC3339.text) ?? "", rate(line.adjustments.last?.bill.value), "\(bill.revision)",
            count(bill.classes?.measured), count(bill.classes?.interpolated), count(bill.classes?.flagged),
            count(bill.rankPosition), bill.rank.rawValue,
        ]
    }
}
