import Foundation

/// Local days, ISO weeks, months and billing periods in one time zone, daylight-saving changes included: a local
/// day is 23, 24 or 25 hours of UTC milliseconds (`docs/windows.md`, "Windows").
///
/// Foundation's Gregorian calendar reads the zone rules from the system's tz database.
public struct CivilCalendar: Sendable, Hashable {
    public let timeZone: TimeZone
    /// The zone's name as configured (Foundation may report UTC as "GMT").
    public let name: String
    private let calendar: Calendar

    public init(timeZone: TimeZone, name: String? = nil) {
        self.timeZone = timeZone
        self.name = name ?? timeZone.identifier
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        // ISO 8601 weeks: Monday first, the first week of a year has at least four days.
        calendar.firstWeekday = 2
        calendar.minimumDaysInFirstWeek = 4
        self.calendar = calendar
    }

    public static let utc = CivilCalendar(timeZone: TimeZone(identifier: "UTC")!, name: "UTC")

    /// The named zone, or nil when the system's tz database does not know it.
    public init?(identifier: String) {
        guard let zone = TimeZone(identifier: identifier) else { return nil }
        self.init(timeZone: zone, name: identifier)
    }

    /// The system's zone: the tz database name `/etc/localtime` links to (what `timedatectl set-timezone` sets), else
    /// the name in `/etc/timezone`; UTC when neither says (a container with neither). UTC's other names (`Etc/UTC`,
    /// `Zulu`, …) are called UTC, as the config's default was.
    public static func system(localtime: String = "/etc/localtime", timezoneFile: String = "/etc/timezone")
        -> CivilCalendar
    {
        var name: String?
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: localtime),
            let range = target.range(of: "zoneinfo/")
        {
            name = String(target[range.upperBound...])
        } else if let text = try? String(contentsOfFile: timezoneFile, encoding: .utf8) {
            name = text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard let name, !name.isEmpty else { return .utc }
        let utcNames: Set = ["UTC", "Etc/UTC", "UCT", "Etc/UCT", "Universal", "Etc/Universal", "Zulu", "Etc/Zulu"]
        if utcNames.contains(name) { return .utc }
        return CivilCalendar(identifier: name) ?? .utc
    }

    public enum Unit: String, Sendable, Hashable, CaseIterable {
        case day, week, month, year
    }

    /// The local `unit` holding `time` (ms since the Unix epoch) as `[from, to)`.
    public func span(of unit: Unit, containing time: Int64) -> (from: Int64, to: Int64) {
        let component: Calendar.Component =
            switch unit {
            case .day: .day
            case .week: .weekOfYear
            case .month: .month
            case .year: .year
            }
        let interval = calendar.dateInterval(of: component, for: Self.date(time))!
        return (Self.milliseconds(interval.start), Self.milliseconds(interval.end))
    }

    /// The billing period holding `time`: from local midnight of day `day` (the month's last day when it is
    /// shorter) of a month to the same point of the next month.
    public func billingPeriod(day: Int, containing time: Int64) -> (from: Int64, to: Int64) {
        let date = Self.date(time)
        let parts = calendar.dateComponents([.year, .month], from: date)
        var start = periodStart(year: parts.year!, month: parts.month!, day: day)
        if start > time {
            let (year, month) = parts.month! == 1 ? (parts.year! - 1, 12) : (parts.year!, parts.month! - 1)
            start = periodStart(year: year, month: month, day: day)
        }
        let startParts = calendar.dateComponents([.year, .month], from: Self.date(start))
        let (year, month) =
            startParts.month! == 12 ? (startParts.year! + 1, 1) : (startParts.year!, startParts.month! + 1)
        return (start, periodStart(year: year, month: month, day: day))
    }

    /// The billing period before the one holding `time`.
    public func previousBillingPeriod(day: Int, before time: Int64) -> (from: Int64, to: Int64) {
        let current = billingPeriod(day: day, containing: time)
        return billingPeriod(day: day, containing: current.from - 1)
    }

    private func periodStart(year: Int, month: Int, day: Int) -> Int64 {
        let first = calendar.date(from: DateComponents(year: year, month: month, day: 1))!
        let days = calendar.range(of: .day, in: .month, for: first)!.count
        let midnight = calendar.date(from: DateComponents(year: year, month: month, day: min(day, days)))!
        return Self.milliseconds(calendar.startOfDay(for: midnight))
    }

    /// The local date and time of `time`, for people: `2026-11-23 14:05:00 CET`.
    public func localText(_ time: Int64) -> String {
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: Self.date(time))
        let zone = name == "UTC" ? "UTC" : timeZone.abbreviation(for: Self.date(time)) ?? name
        return "\(pad(parts.year!, 4))-\(pad(parts.month!))-\(pad(parts.day!)) "
            + "\(pad(parts.hour!)):\(pad(parts.minute!)):\(pad(parts.second!)) \(zone)"
    }

    /// The local date and minute of `time`: `2026-11-23 14:05`.
    public func localMinute(_ time: Int64) -> String {
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: Self.date(time))
        return
            "\(pad(parts.year!, 4))-\(pad(parts.month!))-\(pad(parts.day!)) \(pad(parts.hour!)):\(pad(parts.minute!))"
    }

    /// The local date of `time`: `2026-11-23`.
    public func localDate(_ time: Int64) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: Self.date(time))
        return "\(pad(parts.year!, 4))-\(pad(parts.month!))-\(pad(parts.day!))"
    }

    /// The local month of `time`: `2026-11`.
    public func localMonth(_ time: Int64) -> String {
        let parts = calendar.dateComponents([.year, .month], from: Self.date(time))
        return "\(pad(parts.year!, 4))-\(pad(parts.month!))"
    }

    /// Local midnight starting the given date, if it exists.
    public func startOfDay(year: Int, month: Int, day: Int) -> Int64? {
        guard let date = calendar.date(from: DateComponents(year: year, month: month, day: day)) else { return nil }
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        guard parts.year == year, parts.month == month, parts.day == day else { return nil }
        return Self.milliseconds(calendar.startOfDay(for: date))
    }

    static func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1_000) }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1_000).rounded()) }

    private func pad(_ value: Int, _ width: Int = 2) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    public static func == (lhs: CivilCalendar, rhs: CivilCalendar) -> Bool { lhs.timeZone == rhs.timeZone }
    public func hash(into hasher: inout Hasher) { hasher.combine(timeZone) }
}

/// UTC RFC 3339 text of milliseconds since the Unix epoch: `2026-11-23T14:05:00Z` (`.123` when not whole seconds).
public enum RFC3339 {
    public static func text(_ milliseconds: Int64) -> String {
        let seconds = milliseconds >= 0 ? milliseconds / 1_000 : (milliseconds - 999) / 1_000
        let fraction = milliseconds - seconds * 1_000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(days: days)
        var text = "\(pad(year, 4))-\(pad(month))-\(pad(day))T\(pad(Int(secondOfDay / 3_600)))"
        text += ":\(pad(Int(secondOfDay / 60 % 60))):\(pad(Int(secondOfDay % 60)))"
        if fraction != 0 { text += "." + pad(Int(fraction), 3) }
        return text + "Z"
    }

    /// Parses `2026-11-23T14:05:00Z`, `2026-11-23T14:05:00.5+01:00`, `2026-11-23 14:05` (UTC), `2026-11-23`.
    public static func parse(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard bytes.count >= 10, bytes[4] == 45, bytes[7] == 45, let year = number(0..<4), let month = number(5..<7),
            let day = number(8..<10), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var milliseconds = Int64(daysFromCivil(year: year, month: month, day: day)) * 86_400_000
        guard civil(days: milliseconds / 86_400_000) == (year, month, day) else { return nil }
        var index = 10
        if index < bytes.count {
            guard bytes[index] == 84 || bytes[index] == 116 || bytes[index] == 32, let hour = number(11..<13),
                bytes.count > 13, bytes[13] == 58, let minute = number(14..<16), hour < 24, minute < 60
            else { return nil }
            milliseconds += Int64(hour * 3_600_000 + minute * 60_000)
            index = 16
            if index < bytes.count, bytes[index] == 58 {
                guard let second = number(17..<19), second < 60 else { return nil }
                milliseconds += Int64(second * 1_000)
                index = 19
                if index < bytes.count, bytes[index] == 46 {
                    var digits = 0
                    var fraction = 0
                    index += 1
                    while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                        if digits < 3 { fraction = fraction * 10 + Int(bytes[index] - 48) }
                        digits += 1
                        index += 1
                    }
                    guard digits > 0 else { return nil }
                    if digits < 3 { for _ in digits..<3 { fraction *= 10 } }
                    milliseconds += Int64(fraction)
                }
            }
            if index < bytes.count {
                if bytes[index] == 90 || bytes[index] == 122 {
                    index += 1
                } else if bytes[index] == 43 || bytes[index] == 45 {
                    guard bytes.count >= index + 6, let hours = number(index + 1..<index + 3),
                        bytes[index + 3] == 58, let minutes = number(index + 4..<index + 6)
                    else { return nil }
                    let offset = Int64(hours * 3_600_000 + minutes * 60_000)
                    milliseconds += bytes[index] == 43 ? -offset : offset
                    index += 6
                }
            }
        }
        return index == bytes.count ? milliseconds : nil
    }

    /// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (Howard Hinnant's algorithm).
    static func civil(days: Int64) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0)), Int(month), Int(day))
    }

    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func pad(_ value: Int, _ width: Int = 2) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
