/// The civil calendar a chart reads instants on: a time zone offset, the first day of the week and the names
/// used in labels.
///
/// PulseCharts never consults the machine's locale or time zone, so the same input always gives the same SVG.
/// Pass the viewer's offset and first weekday explicitly when they matter.
public struct ChartCalendar: Sendable {
    /// Seconds east of UTC at a given instant. A fixed offset returns the same number for every instant.
    public var utcOffset: @Sendable (ChartDate) -> Int
    /// The weekday that starts a week, for weekly strides and weekday bins. ISO 8601 (and most of Europe) use Monday.
    public var firstWeekday: Weekday
    /// Twelve month names, January first, used where an axis or a label shows a month.
    public var monthSymbols: [String]
    /// Seven weekday names, Monday first, used where an axis or a label shows a weekday.
    public var weekdaySymbols: [String]

    /// Creates a calendar with a fixed offset from UTC.
    ///
    /// - Parameters:
    ///   - utcOffsetSeconds: Seconds east of UTC, for example 3600 for UTC+1.
    ///   - firstWeekday: The first day of a week; Monday by default, as in ISO 8601.
    public init(utcOffsetSeconds: Int = 0, firstWeekday: Weekday = .monday) {
        self.init(firstWeekday: firstWeekday) { _ in utcOffsetSeconds }
    }

    /// Creates a calendar whose offset from UTC depends on the instant, for zones with daylight saving time.
    public init(firstWeekday: Weekday = .monday, utcOffset: @escaping @Sendable (ChartDate) -> Int) {
        self.utcOffset = utcOffset
        self.firstWeekday = firstWeekday
        self.monthSymbols = ChartCalendar.englishMonths
        self.weekdaySymbols = Weekday.englishShortNames
    }

    /// UTC with weeks starting on Monday.
    public static let utc = ChartCalendar()

    static let englishMonths = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The wall-clock fields of an instant.
    func components(of date: ChartDate) -> DateComponents {
        let local = date.secondsSinceEpoch + Double(utcOffset(date))
        let dayNumber = Int((local / 86_400).rounded(.down))
        let secondOfDay = local - Double(dayNumber) * 86_400
        let civil = CivilDate(days: dayNumber)
        let whole = Int(secondOfDay.rounded(.down))
        return DateComponents(
            year: civil.year, month: civil.month, day: civil.day,
            hour: whole / 3600, minute: (whole % 3600) / 60, second: secondOfDay - Double(whole / 60 * 60),
            weekday: Weekday(rawValue: CivilDate.isoWeekday(days: dayNumber)) ?? .monday
        )
    }

    /// The instant of a wall-clock time; the offset is looked up near the instant, which is exact outside the
    /// hour around a daylight-saving change.
    func date(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Double = 0) -> ChartDate {
        let guess = ChartDate(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        let first = utcOffset(guess)
        let shifted = guess.advanced(by: -Double(first))
        let second = utcOffset(shifted)
        return guess.advanced(by: -Double(second))
    }

    /// The start of the calendar period that contains `date`.
    func startOf(_ unit: CalendarUnit, containing date: ChartDate) -> ChartDate {
        let c = components(of: date)
        switch unit {
        case .second:
            return self.date(
                year: c.year, month: c.month, day: c.day, hour: c.hour, minute: c.minute,
                second: c.second.rounded(.down))
        case .minute: return self.date(year: c.year, month: c.month, day: c.day, hour: c.hour, minute: c.minute)
        case .hour: return self.date(year: c.year, month: c.month, day: c.day, hour: c.hour)
        case .day: return self.date(year: c.year, month: c.month, day: c.day)
        case .weekOfYear:
            let back = (c.weekday.rawValue - firstWeekday.rawValue + 7) % 7
            return self.date(year: c.year, month: c.month, day: c.day - back)
        case .month: return self.date(year: c.year, month: c.month, day: 1)
        case .quarter: return self.date(year: c.year, month: (c.month - 1) / 3 * 3 + 1, day: 1)
        case .year: return self.date(year: c.year, month: 1, day: 1)
        }
    }

    /// `date` moved by `count` calendar units; months and years keep the wall-clock fields.
    func adding(_ count: Int, _ unit: CalendarUnit, to date: ChartDate) -> ChartDate {
        let c = components(of: date)
        switch unit {
        case .second: return date.advanced(by: Double(count))
        case .minute: return date.advanced(by: Double(count) * 60)
        case .hour: return date.advanced(by: Double(count) * 3600)
        case .day, .weekOfYear:
            let days = unit == .day ? count : count * 7
            return self.date(
                year: c.year, month: c.month, day: c.day + days, hour: c.hour, minute: c.minute, second: c.second)
        case .month, .quarter, .year:
            let months = unit == .month ? count : unit == .quarter ? count * 3 : count * 12
            return self.date(
                year: c.year, month: c.month + months, day: c.day, hour: c.hour, minute: c.minute, second: c.second)
        }
    }
}

/// Wall-clock fields of an instant in a `ChartCalendar`.
struct DateComponents: Hashable, Sendable {
    var year: Int
    var month: Int
    var day: Int
    var hour: Int
    var minute: Int
    var second: Double
    var weekday: Weekday
}
