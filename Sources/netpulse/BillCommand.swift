import ArgumentParser
import PulseAnalytics
import PulseCore
import PulseFormats
import PulseQuery
import PulseStore

/// 95th-percentile bills, as a carrier computes them.
struct BillCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bill",
        abstract: "95th-percentile bills of the fleet, groups, hosts or interfaces for a billing period.",
        discussion: """
            The 5-minute rates of the period in ascending order, the value at the rank round(0.95 × n) (or \
            ⌈0.95 × n⌉ with rank = "nearest-rank"). Each bill says how many intervals were measured, interpolated \
            from short gaps, missing (excluded, never zero) and flagged (an implausible step), and the rank it took. \
            Methods, billing days and which intervals count come from [billing] (docs/windows.md).
            """)

    @OptionGroup var options: QueryOptions

    @Option(name: .long, help: "current, previous, or a month (2026-10): the period that starts in it.")
    var period = "current"

    @Option(name: .long, help: "Bill the fleet, groups, hosts or interfaces (default: from the other options).")
    var scope: ScopeOption?

    @Flag(
        name: .long,
        help:
            "Also say what each bill's scope was over its period: counted interfaces and link speed as of its steps, and the hosts in it then."
    )
    var members = false

    func run() async throws {
        try await runQuery(options) {
            let now = Netpulse.clock.now()
            let (engine, _) = try await options.engine(now: now)
            _ = try point(in: engine, day: engine.billing.day, now: now)
            let kind = scope?.kind ?? options.defaultScope
            let series = try engine.catalogue.select(options.selection(kind))
            guard !series.isEmpty else { throw QueryError("nothing stored yet for this selection") }
            var points = [Int64: Int64]()
            for record in series {
                points[record.id] = try point(
                    in: engine, day: engine.billing.terms(for: engine.billedScope(record)).day, now: now)
            }
            let lines = try await engine.bills(series, containing: { points[$0.id]! }, now: now)
            let memberships = members ? try await engine.billMembers(lines) : [:]
            let calendar = engine.billing.calendar
            switch options.format {
            case .table:
                var rows = [
                    [
                        "SCOPE", "PERIOD", "METHOD", "95TH PCT", "IN", "OUT", "SUM", "N", "MEASURED", "INTERP",
                        "MISSING", "FLAGGED", "RANK", "STATUS",
                    ] + (members ? ["MEMBERS", "HOSTS"] : [])
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
                        }
                        ?? "-"
                    let row: [String] = [
                        TerminalText.safe(line.series.name),
                        "\(calendar.localDate(bill.period.from)) … \(calendar.localDate(bill.period.to))",
                        bill.method.rawValue, TerminalText.rate(bill.value), TerminalText.rate(bill.inbound),
                        TerminalText.rate(bill.outbound), TerminalText.rate(bill.sum), "\(bill.intervals)",
                        bill.classes.map { "\($0.measured)" } ?? "-", bill.classes.map { "\($0.interpolated)" } ?? "-",
                        "\(bill.missing)", bill.classes.map { "\($0.flagged)" } ?? "-",
                        rank, status,
                    ]
                    rows.append(
                        row + (members ? Self.membersColumns(memberships[line.series.id], calendar: calendar) : []))
                }
                print(TerminalText.table(rows, numeric: [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]), terminator: "")
            case .csv:
                let extra = members ? FigureFormat.billMembersCSVHeader : []
                print(
                    CSVText.row(FigureFormat.billCSVHeader + extra)
                        + lines.map { line in
                            CSVText.row(
                                FigureFormat.billCSV(line)
                                    + (members ? FigureFormat.billMembersCSV(memberships[line.series.id]) : []))
                        }.joined(), terminator: "")
            case .json:
                print(
                    JSONText.array(
                        lines.map { FigureFormat.billJSON($0, calendar: calendar, members: memberships[$0.series.id]) })
                )
            }
        }
    }

    /// A time inside the period asked for.
    func point(in engine: WindowEngine, day: Int, now: Int64) throws -> Int64 {
        switch period {
        case "current": return now
        case "previous": return engine.billing.calendar.previousBillingPeriod(day: day, before: now).from
        default:
            let parts = period.split(separator: "-")
            guard parts.count == 2, let year = Int(parts[0]), let month = Int(parts[1]), parts[0].count == 4,
                let start = engine.billing.calendar.startOfDay(year: year, month: month, day: 1)
            else {
                throw QueryError("--period \(period): use current, previous or a month such as 2026-10")
            }
            // The period that starts in that month holds the month's last moment.
            return engine.billing.calendar.span(of: .month, containing: start).to - 1
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
