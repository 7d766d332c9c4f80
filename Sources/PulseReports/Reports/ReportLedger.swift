import Foundation
import PulseAnalytics
import PulseCore
import PulseFormats
import PulseQuery

/// What the reports directory has issued (`ledger.json`): each report's period and the figures it printed, and
/// every adjustment found since. A run compares the recent reports' figures with the store as it is now; a change
/// (late data) is an adjustment the new report prints, and the ledger then holds the new figure, so each change
/// is reported once. A report made again finds the adjustments its first run recorded, so the same data gives
/// the same files.
public struct ReportLedger: Sendable, Hashable {
    public struct Entry: Sendable, Hashable {
        public var from: Int64
        public var to: Int64
        public var kind: String
        /// `fleet` or `group:KEY=VALUE`: a run reconciles only reports of its own scope.
        public var scope: String
        /// The bucket width the figures were read at (ms), so they are read again at the same.
        public var resolution: Int64?
        /// `fleet` / `host:NAME` / `group:KEY=VALUE` → rx bytes, tx bytes, rx p95, tx p95 (milli-bytes/s).
        public var figures: [String: [Int64?]]
        public var revision: Int64
    }

    public var entries: [String: Entry] = [:]
    public var adjustments: [ReportAdjustment] = []

    public init() {}

    public static let fields = ["rx_bytes", "tx_bytes", "rx_p95", "tx_p95"]

    /// How far back a run looks for changed reports: late data comes from agents' spools, days at most.
    static func lookback(_ kind: ReportPeriod.Kind) -> Int64 {
        switch kind {
        case .day, .range: 8 * 86_400_000
        case .week: 36 * 86_400_000
        case .month: 63 * 86_400_000
        }
    }

    /// The recent earlier reports of `report`'s scope that a run compares with the store as it is now: read their
    /// figures again (``ReportQuery/ledgerFigures(of:now:)``) and pass them to ``reconcile(_:current:)``.
    public func earlier(than report: Report) -> [IssuedReport] {
        earlierEntries(than: report).map { name, entry in
            IssuedReport(
                name: name, keys: Set(entry.figures.keys), from: entry.from, to: entry.to,
                resolution: entry.resolution)
        }
    }

    /// The entries ``earlier(than:)`` names, oldest first.
    func earlierEntries(than report: Report) -> [(name: String, entry: Entry)] {
        let horizon = report.period.to - Self.lookback(report.period.kind)
        return entries.sorted(by: { ($0.value.from, $0.key) < ($1.value.from, $1.key) }).filter { name, entry in
            name != report.name && entry.scope == report.scopeKey && entry.to <= report.period.to
                && entry.to > horizon
        }.map { (name: $0.key, entry: $0.value) }
    }

    /// Adds `report` to the ledger and fills its adjustments: those recorded for it before, and every figure of
    /// a recent earlier report (or of an earlier issue of this one) that the store now gives differently.
    ///
    /// - Parameter current: the figures of the reports ``earlier(than:)`` names, as the store gives them now; a
    ///   report left out (the store can no longer read it at its resolution: its buckets have gone) has nothing
    ///   to compare and stays as it was issued.
    public mutating func reconcile(_ report: inout Report, current figuresNow: [String: [String: [Int64?]]]) {
        var found = adjustments.filter { $0.foundBy == report.name }
        let known = Set(found.map { "\($0.report) \($0.series) \($0.field) \(String(describing: $0.now))" })
        for (name, entry) in earlierEntries(than: report) {
            guard let current = figuresNow[name] else { continue }
            var updated = entry
            for (series, was) in entry.figures.sorted(by: { $0.key < $1.key }) {
                guard let now = current[series], now != was else { continue }
                for (index, field) in Self.fields.enumerated() where was[index] != now[index] {
                    let adjustment = ReportAdjustment(
                        foundBy: report.name, report: name, series: series, field: field, was: was[index],
                        now: now[index], revision: report.revision)
                    let id = "\(name) \(series) \(field) \(String(describing: now[index]))"
                    if !known.contains(id) { found.append(adjustment) }
                }
                updated.figures[series] = now
            }
            updated.revision = max(entry.revision, report.revision)
            entries[name] = updated
        }
        // The same period issued again with other figures: say so in the new issue.
        let figures = report.ledgerFigures
        if let earlier = entries[report.name] {
            for (series, now) in figures.sorted(by: { $0.key < $1.key }) {
                guard let was = earlier.figures[series], was != now else { continue }
                for (index, field) in Self.fields.enumerated() where was[index] != now[index] {
                    found.append(
                        ReportAdjustment(
                            foundBy: report.name, report: report.name, series: series, field: field,
                            was: was[index], now: now[index], revision: report.revision))
                }
            }
        }
        entries[report.name] = Entry(
            from: report.period.from, to: report.period.to, kind: report.period.kind.rawValue,
            scope: report.scopeKey, resolution: report.scope?.figures.resolution.width, figures: figures,
            revision: report.revision)
        let recorded = Set(adjustments)
        adjustments += found.filter { !recorded.contains($0) }
        report.adjustments = found
        prune(before: report.period.to - Self.kept)
    }

    /// How long the ledger remembers a report: past every lookback. A report older than this made again gives
    /// the same figures but no longer lists the adjustments its first run found.
    static let kept: Int64 = 100 * 86_400_000

    /// Forgets reports that ended before `time`, and adjustments found by reports it no longer has.
    mutating func prune(before time: Int64) {
        entries = entries.filter { $0.value.to >= time }
        adjustments = adjustments.filter { entries[$0.foundBy] != nil }
    }

    // MARK: The file

    /// Reads `path`; a missing file is an empty ledger.
    /// - Throws: ``ReportError`` naming the file when it is not a ledger.
    public static func load(_ path: String) throws -> ReportLedger {
        guard FileIO.exists(path) else { return ReportLedger() }
        let bytes = try FileIO.readBytes(path)
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
            let reports = object["reports"] as? [String: [String: Any]],
            let adjustments = object["adjustments"] as? [[String: Any]]
        else {
            throw ReportError("\(path) is not a report ledger; move it aside to start a new one")
        }
        func int(_ value: Any?) -> Int64? { (value as? NSNumber)?.int64Value }
        var ledger = ReportLedger()
        guard int(object["version"]) == 1 else {
            throw ReportError("\(path) is a report ledger of another version; move it aside to start a new one")
        }
        for (name, entry) in reports {
            guard let from = int(entry["from_ms"]), let to = int(entry["to_ms"]),
                let figures = entry["figures"] as? [String: [Any]],
                figures.values.allSatisfy({ $0.count == fields.count })
            else {
                throw ReportError(
                    "\(path): report \(name) lacks from_ms, to_ms or figures of \(fields.count) values; move the file aside to start a new ledger"
                )
            }
            ledger.entries[name] = Entry(
                from: from, to: to, kind: entry["kind"] as? String ?? "", scope: entry["scope"] as? String ?? "fleet",
                resolution: int(entry["resolution_ms"]), figures: figures.mapValues { $0.map(int) },
                revision: int(entry["revision"]) ?? 0)
        }
        for item in adjustments {
            ledger.adjustments.append(
                ReportAdjustment(
                    foundBy: item["found_by"] as? String ?? "", report: item["report"] as? String ?? "",
                    series: item["series"] as? String ?? "", field: item["field"] as? String ?? "",
                    was: int(item["was"]), now: int(item["now"]), revision: int(item["revision"]) ?? 0))
        }
        return ledger
    }

    /// The ledger as JSON, keys in order (the same ledger gives the same bytes).
    public var json: String {
        JSONText.object([
            ("version", "1"),
            (
                "reports",
                JSONText.object(
                    entries.sorted { $0.key < $1.key }.map { name, entry in
                        (
                            name,
                            JSONText.object([
                                ("kind", JSONText.string(entry.kind)), ("scope", JSONText.string(entry.scope)),
                                ("from_ms", "\(entry.from)"), ("to_ms", "\(entry.to)"),
                                ("resolution_ms", JSONText.number(entry.resolution)),
                                ("revision", "\(entry.revision)"),
                                (
                                    "figures",
                                    JSONText.object(
                                        entry.figures.sorted { $0.key < $1.key }.map {
                                            ($0.key, JSONText.array($0.value.map(JSONText.number)))
                                        })
                                ),
                            ])
                        )
                    })
            ),
            ("adjustments", JSONText.array(adjustments.map(Self.adjustmentJSON))),
        ]) + "\n"
    }

    static func adjustmentJSON(_ adjustment: ReportAdjustment) -> String {
        JSONText.object([
            ("found_by", JSONText.string(adjustment.foundBy)), ("report", JSONText.string(adjustment.report)),
            ("series", JSONText.string(adjustment.series)), ("field", JSONText.string(adjustment.field)),
            ("was", JSONText.number(adjustment.was)), ("now", JSONText.number(adjustment.now)),
            ("revision", "\(adjustment.revision)"),
        ])
    }
}

public struct ReportError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
