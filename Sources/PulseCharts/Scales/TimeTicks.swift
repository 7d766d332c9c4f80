/// Calendar-aligned ticks for time scales: seconds through years, aligned to whole minutes, hours, days,
/// weeks (on the calendar's first weekday), months and years.
enum TimeTicks {
    struct Stride: Hashable, Sendable {
        var unit: CalendarUnit
        var count: Int

        var approximateSeconds: Double { unit.approximateSeconds * Double(count) }
    }

    static let strides: [Stride] = [
        Stride(unit: .second, count: 1), Stride(unit: .second, count: 2), Stride(unit: .second, count: 5),
        Stride(unit: .second, count: 10), Stride(unit: .second, count: 15), Stride(unit: .second, count: 30),
        Stride(unit: .minute, count: 1), Stride(unit: .minute, count: 2), Stride(unit: .minute, count: 5),
        Stride(unit: .minute, count: 10), Stride(unit: .minute, count: 15), Stride(unit: .minute, count: 30),
        Stride(unit: .hour, count: 1), Stride(unit: .hour, count: 2), Stride(unit: .hour, count: 3),
        Stride(unit: .hour, count: 6), Stride(unit: .hour, count: 12), Stride(unit: .day, count: 1),
        Stride(unit: .day, count: 2), Stride(unit: .weekOfYear, count: 1), Stride(unit: .weekOfYear, count: 2),
        Stride(unit: .month, count: 1), Stride(unit: .month, count: 3), Stride(unit: .month, count: 6),
        Stride(unit: .year, count: 1), Stride(unit: .year, count: 2), Stride(unit: .year, count: 5),
        Stride(unit: .year, count: 10), Stride(unit: .year, count: 25), Stride(unit: .year, count: 50),
        Stride(unit: .year, count: 100),
    ]

    /// The index in `strides` of the finest stride giving at most `count` intervals over `span` seconds.
    static func strideIndex(span: Double, count: Int) -> Int {
        let target = span / Double(max(count, 1))
        return strides.firstIndex { $0.approximateSeconds >= target } ?? strides.count - 1
    }

    /// Tick instants of `stride` within `lower ... upper`.
    static func ticks(lower: Double, upper: Double, stride: Stride, calendar: ChartCalendar) -> [Double] {
        guard upper >= lower, lower.isFinite, upper.isFinite else { return [] }
        guard (upper - lower) / stride.approximateSeconds < 5000 else { return [] }
        var tick = alignedStart(lower, stride: stride, calendar: calendar)
        var ticks: [Double] = []
        var guardCount = 0
        while tick.secondsSinceEpoch <= upper + 1e-6 && guardCount < 10_000 {
            if tick.secondsSinceEpoch >= lower - 1e-6 { ticks.append(tick.secondsSinceEpoch) }
            let next = calendar.adding(stride.count, stride.unit, to: tick)
            // A daylight-saving change can make a step land on the same instant; never loop on it.
            tick = next.secondsSinceEpoch > tick.secondsSinceEpoch ? next : tick.advanced(by: stride.approximateSeconds)
            guardCount += 1
        }
        return ticks
    }

    /// The last aligned instant at or before `value`: hours a multiple of the count, and so on.
    static func alignedStart(_ value: Double, stride: Stride, calendar: ChartCalendar) -> ChartDate {
        let date = ChartDate(secondsSinceEpoch: value)
        let start = calendar.startOf(stride.unit, containing: date)
        let c = calendar.components(of: start)
        let n = stride.count
        switch stride.unit {
        case .second:
            let s = Int(c.second)
            return calendar.date(
                year: c.year, month: c.month, day: c.day, hour: c.hour, minute: c.minute,
                second: Double(s - s % n))
        case .minute:
            return calendar.date(
                year: c.year, month: c.month, day: c.day, hour: c.hour, minute: c.minute - c.minute % n)
        case .hour:
            return calendar.date(year: c.year, month: c.month, day: c.day, hour: c.hour - c.hour % n)
        case .day:
            return calendar.date(year: c.year, month: c.month, day: c.day - (c.day - 1) % n)
        case .weekOfYear:
            return start
        case .month, .quarter:
            let months = stride.unit == .quarter ? n * 3 : n
            return calendar.date(year: c.year, month: c.month - (c.month - 1) % months, day: 1)
        case .year:
            return calendar.date(year: c.year - floorMod(c.year, n), month: 1, day: 1)
        }
    }

    /// The label format for ticks of `stride`: a time of day, a day, a month or a year.
    static func labelFormats(for stride: Stride) -> (regular: DateFormat, boundary: DateFormat?) {
        switch stride.unit {
        case .second: return (.hourMinuteSecond, .monthDay)
        case .minute, .hour: return (.hourMinute, .monthDay)
        case .day, .weekOfYear: return (.monthDay, nil)
        case .month, .quarter: return (.month, .year)
        case .year: return (.year, nil)
        }
    }

    /// Labels for ticks: times of day, with the date instead at midnight when the axis spans several days, and
    /// the year instead of January on month axes.
    static func labels(for ticks: [Double], stride: Stride, calendar: ChartCalendar) -> [String] {
        let formats = labelFormats(for: stride)
        let spansDays: Bool = {
            guard let first = ticks.first, let last = ticks.last else { return false }
            let a = calendar.components(of: ChartDate(secondsSinceEpoch: first))
            let b = calendar.components(of: ChartDate(secondsSinceEpoch: last))
            return a.year != b.year || a.month != b.month || a.day != b.day
        }()
        return ticks.map { value in
            let date = ChartDate(secondsSinceEpoch: value)
            let c = calendar.components(of: date)
            if let boundary = formats.boundary {
                switch stride.unit {
                case .second, .minute, .hour:
                    if spansDays && c.hour == 0 && c.minute == 0 && c.second == 0 {
                        return boundary.format(date, calendar: calendar)
                    }
                case .month, .quarter:
                    if c.month == 1 { return boundary.format(date, calendar: calendar) }
                default: break
                }
            }
            return formats.regular.format(date, calendar: calendar)
        }
    }
}
