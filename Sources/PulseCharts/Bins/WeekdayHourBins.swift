/// Values binned by weekday and hour of day, for a weekday × hour heatmap or a weekday bar chart.
///
/// The week starts on the calendar's first weekday (pass the locale's, as in the Swift Charts weekday post), and
/// every one of the 7 × 24 cells exists: an hour with no samples is a cell with value zero and count zero, so no
/// day or hour is ever skipped.
///
/// ```swift
/// let bins = WeekdayHourBins(samples, calendar: calendar, aggregation: .sum) { ($0.time, $0.bytes) }
/// Chart(bins.cells) { cell in
///     RectangleMark(x: .value("Hour", cell.hourLabel), y: .value("Day", cell.weekdayName))
///         .foregroundStyle(by: .value("Bytes", cell.value))
/// }
/// ```
public struct WeekdayHourBins: Sendable {
    /// How the values that fall into one cell are combined.
    public enum Aggregation: Sendable, Hashable {
        case sum, mean, maximum, count
    }

    /// One weekday and hour.
    public struct Cell: Sendable, Hashable {
        /// The cell's day of the week.
        public var weekday: Weekday
        /// 0 ... 23.
        public var hour: Int
        /// The aggregated value; zero when no sample fell into the cell.
        public var value: Double
        /// How many samples fell into the cell.
        public var count: Int
        /// The weekday's name from the calendar, such as "Mon".
        public var weekdayName: String
        /// The hour as two digits, "00" ... "23".
        public var hourLabel: String
    }

    /// The seven weekdays in display order, starting at the calendar's first weekday.
    public let weekdays: [Weekday]
    /// 168 cells, weekday by weekday in display order, hour 0 to 23 within each.
    public let cells: [Cell]

    /// Bins samples.
    ///
    /// - Parameters:
    ///   - samples: Any sequence; `extract` gives each sample's instant and value.
    ///   - calendar: The time zone offset and first weekday to bin in.
    ///   - aggregation: How values in one cell combine.
    public init<Samples: Sequence>(
        _ samples: Samples, calendar: ChartCalendar = .utc, aggregation: Aggregation = .sum,
        extract: (Samples.Element) -> (ChartDate, Double)
    ) {
        var sums = [Double](repeating: 0, count: 7 * 24)
        var maxima = [Double](repeating: -Double.infinity, count: 7 * 24)
        var counts = [Int](repeating: 0, count: 7 * 24)
        let order = Weekday.ordered(startingAt: calendar.firstWeekday)
        var slot = [Int](repeating: 0, count: 8)
        for (index, day) in order.enumerated() { slot[day.rawValue] = index }
        for sample in samples {
            let (date, value) = extract(sample)
            guard date.secondsSinceEpoch.isFinite, value.isFinite else { continue }
            let c = calendar.components(of: date)
            let cell = slot[c.weekday.rawValue] * 24 + c.hour
            sums[cell] += value
            maxima[cell] = max(maxima[cell], value)
            counts[cell] += 1
        }
        self.weekdays = order
        self.cells = (0..<(7 * 24)).map { index in
            let weekday = order[index / 24]
            let count = counts[index]
            let value: Double
            switch aggregation {
            case .sum: value = sums[index]
            case .mean: value = count > 0 ? sums[index] / Double(count) : 0
            case .maximum: value = count > 0 ? maxima[index] : 0
            case .count: value = Double(count)
            }
            return Cell(
                weekday: weekday, hour: index % 24, value: value, count: count,
                weekdayName: calendar.weekdaySymbols[weekday.rawValue - 1], hourLabel: DateFormat.pad(index % 24, 2))
        }
    }

    /// One total per weekday in display order, for a weekday bar chart; days without samples are zero.
    public var weekdayTotals: [(weekday: Weekday, name: String, value: Double)] {
        weekdays.enumerated().map { index, day in
            let slice = cells[(index * 24)..<(index * 24 + 24)]
            return (day, slice.first?.weekdayName ?? day.shortName, slice.reduce(0) { $0 + $1.value })
        }
    }
}
