import Foundation
import PulseAnalytics
import PulseCore

/// The time a report covers: a local calendar day, ISO week or month in the configured time zone, or any range.
public struct ReportPeriod: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case day, week, month, range
    }

    public var kind: Kind
    /// `[from, to)`, ms since the Unix epoch.
    public var from: Int64
    public var to: Int64
    /// The period's name in files: `2026-11-22`, `2026-W47`, `2026-11`, or `20261101T0000-20261108T0000` (local).
    public var label: String

    /// The latest complete `kind` (day, week or month) that ended at least `settle` ms before `now`: what a
    /// timer firing after midnight reports, once late data has had `settle` to arrive.
    public static func previous(_ kind: Kind, now: Int64, settle: Int64, calendar: CivilCalendar) -> ReportPeriod {
        let unit: CivilCalendar.Unit =
            switch kind {
            case .day, .range: .day
            case .week: .week
            case .month: .month
            }
        let open = calendar.span(of: unit, containing: now - settle)
        let span = calendar.span(of: unit, containing: open.from - 1)
        return named(kind == .range ? .day : kind, from: span.from, to: span.to, calendar: calendar)
    }

    /// The period `[from, to)` named for its kind.
    public static func named(_ kind: Kind, from: Int64, to: Int64, calendar: CivilCalendar) -> ReportPeriod {
        let label: String
        switch kind {
        case .day: label = calendar.localDate(from)
        case .week: label = calendar.localWeek(from)
        case .month: label = calendar.localMonth(from)
        case .range: label = "\(stamp(from, calendar))-\(stamp(to, calendar))"
        }
        return ReportPeriod(kind: kind, from: from, to: to, label: label)
    }

    /// `20261101T0800` in local time.
    static func stamp(_ time: Int64, _ calendar: CivilCalendar) -> String {
        calendar.localMinute(time).replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
            .replacingOccurrences(of: " ", with: "T")
    }

    /// For people: `day 2026-11-22`, `week 2026-W47 (2026-11-16 – 2026-11-22)`, `month 2026-11`.
    public func title(_ calendar: CivilCalendar) -> String {
        switch kind {
        case .day: "Day \(label)"
        case .week: "Week \(label) (\(calendar.localDate(from)) – \(calendar.localDate(to - 1)))"
        case .month: "Month \(label)"
        case .range: "\(calendar.localMinute(from)) – \(calendar.localMinute(to))"
        }
    }
}

extension CivilCalendar {
    /// The ISO week holding `time`: `2026-W47`.
    public func localWeek(_ time: Int64) -> String {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = timeZone
        let date = Date(timeIntervalSince1970: Double(time) / 1_000)
        let week = calendar.component(.weekOfYear, from: date)
        let year = calendar.component(.yearForWeekOfYear, from: date)
        return "\(year)-W\(week < 10 ? "0" : "")\(week)"
    }
}
