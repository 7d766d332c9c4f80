import PulseAnalytics
import PulseCore
import PulseQuery

/// `rates`: each interface's current rates and today's totals.
extension RatesRead.Answer {
    func text(_ format: ReadFormat) -> String {
        switch format {
        case .table:
            guard !interfaces.isEmpty else { return "no interfaces stored yet\n" }
            var rows = [["AGENT", "INTERFACE", "KIND", "RX RATE", "TX RATE", "TODAY RX", "TODAY TX", "LAST SEEN"]]
            for interface in interfaces {
                let figures = current[interface.id]
                let totals = today[interface.id] ?? .empty
                rows.append([
                    interface.agent ?? "", TerminalText.safe(interface.interface?.description ?? ""),
                    interface.facts?.kind.name ?? "unknown", TerminalText.rate(figures?.rx ?? nil),
                    TerminalText.rate(figures?.tx ?? nil), TerminalText.bytes(totals.traffic[.rxBytes]),
                    TerminalText.bytes(totals.traffic[.txBytes]),
                    "\(Units.formatAge(now - interface.lastSeen)) ago",
                ])
            }
            return TerminalText.table(rows, numeric: [3, 4, 5, 6, 7])
        case .csv:
            var out = CSVText.row([
                "agent", "interface", "kind", "speed_mbps", "rx_bytes_per_second", "tx_bytes_per_second",
                "today_rx_bytes", "today_tx_bytes", "last_seen_utc",
            ])
            for interface in interfaces {
                let figures = current[interface.id]
                let totals = today[interface.id] ?? .empty
                out += CSVText.row([
                    interface.agent ?? "", interface.interface?.description ?? "",
                    interface.facts?.kind.name ?? "unknown", interface.facts?.speedMbps.map { "\($0)" } ?? "",
                    (figures?.rx ?? nil).map { FixedPoint.text($0, places: 3) } ?? "",
                    (figures?.tx ?? nil).map { FixedPoint.text($0, places: 3) } ?? "",
                    "\(totals.traffic[.rxBytes])", "\(totals.traffic[.txBytes])", RFC3339.text(interface.lastSeen),
                ])
            }
            return out
        case .json:
            return JSONText.array(
                interfaces.map { interface in
                    let figures = current[interface.id]
                    let totals = today[interface.id] ?? .empty
                    return JSONText.object([
                        ("series", FigureFormat.seriesJSON(interface)),
                        ("rx_bytes_per_second", JSONText.decimal(figures?.rx ?? nil, places: 3)),
                        ("tx_bytes_per_second", JSONText.decimal(figures?.tx ?? nil, places: 3)),
                        ("today_rx_bytes", "\(totals.traffic[.rxBytes])"),
                        ("today_tx_bytes", "\(totals.traffic[.txBytes])"),
                        ("last_seen", JSONText.string(RFC3339.text(interface.lastSeen))),
                    ])
                }) + "\n"
        }
    }
}

/// `traffic`: a table per series of its traffic per period.
extension TrafficRead.Answer {
    func text(_ format: ReadFormat) -> String {
        switch format {
        case .table:
            Self.table(tables, unplaced: unplaced, calendar: calendar, unit: unit)
        case .csv: Self.csv(tables, unplaced: unplaced, received: received)
        case .json:
            Self.json(tables, unplaced: unplaced, received: received, calendar: calendar)
                + "\n"
        }
    }

    static func label(_ window: Window, _ unit: TrafficUnit, _ calendar: CivilCalendar) -> String {
        switch unit {
        case .fiveMinutes, .hour: calendar.localMinute(window.from)
        case .day: calendar.localDate(window.from)
        case .month: calendar.localMonth(window.from)
        case .year: String(calendar.localDate(window.from).prefix(4))
        }
    }

    static func table(
        _ tables: [(SeriesRecord, [TrafficRow])], unplaced: [Int64: UnplacedTotals] = [:], calendar: CivilCalendar,
        unit: TrafficUnit
    ) -> String {
        var out = ""
        var anyUnplaced = false
        for (record, rows) in tables {
            out += "\(TerminalText.safe(record.name)) (\(record.kind.name); times in \(calendar.name))\n"
            let heading = ["5min": "5 MINUTES", "hour": "HOUR", "day": "DAY", "month": "MONTH", "year": "YEAR"][
                unit.rawValue]!
            var lines = [[heading, "RX", "TX", "TOTAL", "AVG RX", "AVG TX", "COVERAGE"]]
            var total = BucketValues()
            for row in rows {
                total.merge(row.values)
                lines.append([
                    label(row.window, unit, calendar), TerminalText.bytes(row.values.traffic[.rxBytes]),
                    TerminalText.bytes(row.values.traffic[.txBytes]),
                    TerminalText.bytes(row.values.traffic[.rxBytes] + row.values.traffic[.txBytes]),
                    TerminalText.rate(row.average.rx), TerminalText.rate(row.average.tx),
                    TerminalText.percent(ppm: row.coverage),
                ])
            }
            lines.append([
                "total", TerminalText.bytes(total.traffic[.rxBytes]), TerminalText.bytes(total.traffic[.txBytes]),
                TerminalText.bytes(total.traffic[.rxBytes] + total.traffic[.txBytes]), "", "", "",
            ])
            if let extra = unplaced[record.id] {
                anyUnplaced = true
                lines.append([
                    "unplaced*", TerminalText.bytes(extra.traffic[.rxBytes]),
                    TerminalText.bytes(extra.traffic[.txBytes]),
                    TerminalText.bytes(extra.traffic[.rxBytes] &+ extra.traffic[.txBytes]), "", "", "",
                ])
            }
            out += TerminalText.table(lines, numeric: Set(1...6)) + "\n"
        }
        if anyUnplaced {
            out +=
                "* received on these days with times that cannot be placed (a clock far off, data older than [ingest] max_age): in no row above\n"
        }
        return out
    }

    /// `row` tells the rows of time (`interval`) from the row of counts whose time could not be placed
    /// (`unplaced`: its range is the days they were received on).
    static let csvHeader = [
        "kind", "series", "from_utc", "to_utc", "rx_bytes", "tx_bytes", "rx_average_bytes_per_second",
        "tx_average_bytes_per_second", "coverage_percent", "row",
    ]

    static func csv(
        _ tables: [(SeriesRecord, [TrafficRow])], unplaced: [Int64: UnplacedTotals] = [:], received: Window? = nil
    ) -> String {
        var out = CSVText.row(csvHeader)
        for (record, rows) in tables {
            for row in rows {
                out += CSVText.row([
                    record.kind.name, record.name, RFC3339.text(row.window.from), RFC3339.text(row.window.to),
                    "\(row.values.traffic[.rxBytes])", "\(row.values.traffic[.txBytes])",
                    row.average.rx.map { FixedPoint.text($0, places: 3) } ?? "",
                    row.average.tx.map { FixedPoint.text($0, places: 3) } ?? "",
                    FixedPoint.text(row.coverage, places: 4), "interval",
                ])
            }
            if let extra = unplaced[record.id], let received {
                out += CSVText.row([
                    record.kind.name, record.name, RFC3339.text(received.from), RFC3339.text(received.to),
                    "\(extra.traffic[.rxBytes])", "\(extra.traffic[.txBytes])", "", "", "", "unplaced",
                ])
            }
        }
        return out
    }

    static func json(
        _ tables: [(SeriesRecord, [TrafficRow])], unplaced: [Int64: UnplacedTotals] = [:], received: Window? = nil,
        calendar: CivilCalendar
    ) -> String {
        JSONText.array(
            tables.map { record, rows in
                JSONText.object([
                    ("series", FigureFormat.seriesJSON(record)),
                    (
                        "unplaced",
                        unplaced[record.id].map { FigureFormat.unplacedJSON($0, received: received) } ?? "null"
                    ),
                    (
                        "rows",
                        JSONText.array(
                            rows.map { row in
                                JSONText.object([
                                    ("from", JSONText.string(RFC3339.text(row.window.from))),
                                    ("to", JSONText.string(RFC3339.text(row.window.to))),
                                    ("from_local", JSONText.string(calendar.localText(row.window.from))),
                                    ("rx_bytes", "\(row.values.traffic[.rxBytes])"),
                                    ("tx_bytes", "\(row.values.traffic[.txBytes])"),
                                    ("rx_average_bytes_per_second", JSONText.decimal(row.average.rx, places: 3)),
                                    ("tx_average_bytes_per_second", JSONText.decimal(row.average.tx, places: 3)),
                                    ("coverage_percent", JSONText.decimal(row.coverage, places: 4)),
                                ])
                            })
                    ),
                ])
            })
    }
}

/// `top`: the ranked series with their figures.
extension TopRead.Answer {
    /// `fleet`, `host:web-01`, `group:site=fra1` as a title says them: the fleet, web-01, site=fra1.
    static func scopeText(_ scope: String) -> String {
        guard scope != "fleet" else { return "the fleet" }
        return TerminalText.safe(String(scope.drop { $0 != ":" }.dropFirst()))
    }

    func text(_ format: ReadFormat) -> String {
        let by = ranking
        switch format {
        case .table:
            var out =
                "top \(count) \(scope.rawValue)s\(countedIn.map { " of " + Self.scopeText($0) } ?? "") by \(by.rawValue), \(calendar.localText(window.from)) … \(calendar.localText(window.to)) (\(calendar.name))\n"
            var rows = [
                [
                    "#", scope.rawValue.uppercased(), by.rawValue.uppercased(), "RX", "TX", "AVG RX", "AVG TX",
                    "COVERAGE",
                ]
            ]
            for (index, entry) in ranked.enumerated() {
                let figure = figures[entry.series.id]
                rows.append([
                    "\(index + 1)", TerminalText.safe(entry.series.name), Self.text(entry.value, by),
                    figure.map { TerminalText.bytes($0.bytes.rx) } ?? "-",
                    figure.map { TerminalText.bytes($0.bytes.tx) } ?? "-",
                    TerminalText.rate(figure?.average.rx ?? nil), TerminalText.rate(figure?.average.tx ?? nil),
                    TerminalText.percent(ppm: figure?.coverage),
                ])
            }
            out += TerminalText.table(rows, numeric: [0, 2, 3, 4, 5, 6, 7])
            if ranked.isEmpty, let countedIn {
                // Most often a host whose interfaces are all virtual, which no scope counts by default.
                out +=
                    "none: no interface that \(Self.scopeText(countedIn)) counts has a value in this window; "
                    + "--interface '*' ranks every interface, whatever its kind\n"
            }
            return out
        case .csv:
            var out = CSVText.row(["rank", "ranking", "ranking_value", "ranking_unit"] + FigureFormat.figuresCSVHeader)
            for (index, entry) in ranked.enumerated() {
                guard let figure = figures[entry.series.id] else { continue }
                out += CSVText.row(
                    ["\(index + 1)", by.rawValue, Snapshot.rankingValue(entry.value, by), Self.unit(by)]
                        + FigureFormat.figuresCSV(entry.series, figure))
            }
            return out
        case .json:
            return JSONText.object([
                ("window", FigureFormat.windowJSON(window, calendar: calendar, resolution: nil)),
                ("ranking", JSONText.string(by.rawValue)), ("unit", JSONText.string(Self.unit(by))),
                ("counted_in", countedIn.map(JSONText.string) ?? "null"),
                (
                    "top",
                    JSONText.array(
                        ranked.enumerated().map { index, entry in
                            JSONText.object([
                                ("rank", "\(index + 1)"), ("series", FigureFormat.seriesJSON(entry.series)),
                                ("value", Snapshot.rankingValue(entry.value, by)),
                                ("figures", figures[entry.series.id].map(FigureFormat.figuresJSON) ?? "null"),
                            ])
                        })
                ),
            ]) + "\n"
        }
    }

    static func unit(_ ranking: Ranking) -> String {
        switch ranking {
        case .bytes: "bytes"
        case .peak, .p95: "bytes_per_second"
        case .errors: "ppm"
        }
    }

    static func text(_ value: Int64, _ ranking: Ranking) -> String {
        switch ranking {
        case .bytes: TerminalText.bytes(value)
        case .peak, .p95: TerminalText.rate(value)
        case .errors: "\(FixedPoint.text(value / 100, places: 4)) %"
        }
    }
}

/// `bill`: 95th-percentile bills, with what each scope was over its period when asked.
extension BillRead.Answer {
    func text(_ format: ReadFormat) -> String {
        let memberships = members
        switch format {
        case .table:
            var rows = [
                [
                    "SCOPE", "PERIOD", "METHOD", "95TH PCT", "IN", "OUT", "SUM", "N", "MEASURED", "INTERP", "MISSING",
                    "FLAGGED", "RANK", "STATUS",
                ] + (memberships != nil ? ["MEMBERS", "HOSTS"] : [])
            ]
            for line in lines {
                let bill = line.bill
                var status =
                    line.issuedAt.map { "issued \(calendar.localDate($0))" }
                    ?? "open, as of \(calendar.localMinute(line.asOf))"
                if let adjustment = line.adjustments.last {
                    status +=
                        "; adjusted to \(TerminalText.rate(adjustment.bill.value)) on \(calendar.localDate(adjustment.foundAt))"
                }
                let rank =
                    bill.rankPosition.map {
                        "\($0) of \(bill.intervals)\(bill.rank == .round ? "" : " (\(bill.rank.rawValue))")"
                    } ?? "-"
                let row: [String] = [
                    TerminalText.safe(line.series.name),
                    "\(calendar.localDate(bill.period.from)) … \(calendar.localDate(bill.period.to))",
                    bill.method.rawValue, TerminalText.rate(bill.value), TerminalText.rate(bill.inbound),
                    TerminalText.rate(bill.outbound), TerminalText.rate(bill.sum), "\(bill.intervals)",
                    bill.classes.map { "\($0.measured)" } ?? "-", bill.classes.map { "\($0.interpolated)" } ?? "-",
                    "\(bill.missing)", bill.classes.map { "\($0.flagged)" } ?? "-", rank, status,
                ]
                rows.append(
                    row + (memberships.map { Self.membersColumns($0[line.series.id], calendar: calendar) } ?? []))
            }
            // The zone the periods are cut in, as every table says its times' zone.
            return "95th-percentile bills (periods and dates in \(calendar.name))\n"
                + TerminalText.table(rows, numeric: [3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
        case .csv:
            let extra = memberships != nil ? FigureFormat.billMembersCSVHeader : []
            return CSVText.row(FigureFormat.billCSVHeader + extra)
                + lines.map { line in
                    CSVText.row(
                        FigureFormat.billCSV(line)
                            + (memberships.map { FigureFormat.billMembersCSV($0[line.series.id]) } ?? []))
                }.joined()
        case .json:
            return JSONText.array(
                lines.map { FigureFormat.billJSON($0, calendar: calendar, members: memberships?[$0.series.id]) })
                + "\n"
        }
    }

    /// The table's MEMBERS and HOSTS: `2, 2000 Mbit/s` (interfaces and their link speed as of the period's
    /// steps; the speed left out when unknown) and the hosts with when they joined or left.
    static func membersColumns(_ members: BillMembers?, calendar: CivilCalendar) -> [String] {
        guard let members else { return ["-", "-"] }
        let speed = members.speedMbps > 0 ? ", \(members.speedMbps) Mbit/s" : ""
        let hosts = FigureFormat.billHostsText(members, calendar: calendar)
        return ["\(members.interfaces)\(speed)", hosts.isEmpty ? "every host" : hosts]
    }
}

/// `export`: buckets or raw samples as CSV or one JSON array, written slice by slice.
enum ExportText {
    static func write(
        _ plan: ExportRead.Plan, json: Bool, progress: ReadProgress?, to write: (String) async throws -> Void
    ) async throws {
        progress?.start(total: plan.series.count)
        var first = true
        if plan.level == nil {
            try await write(json ? "[" : CSVText.row(ExportFormat.sampleColumns))
            try await plan.samples { record, samples in
                var out = ""
                for sample in samples {
                    if json {
                        out += (first ? "\n" : ",\n") + ExportFormat.sampleJSON(sample, of: record)
                        first = false
                    } else {
                        out += ExportFormat.sampleCSV(sample, of: record)
                    }
                }
                try await write(out)
                progress?.advance()
            }
        } else {
            try await write(json ? "[" : CSVText.row(ExportFormat.bucketColumns))
            try await plan.buckets { slice in
                var out = ""
                for (record, rows) in slice {
                    for row in rows {
                        if json {
                            out += (first ? "\n" : ",\n") + ExportFormat.bucketJSON(row, of: record)
                            first = false
                        } else {
                            out += ExportFormat.bucketCSV(row, of: record)
                        }
                    }
                    progress?.advance()
                }
                try await write(out)
            }
        }
        if json { try await write("\n]\n") }
        progress?.finish()
    }
}
