/// An instant in time, as seconds since 1970-01-01T00:00:00Z.
///
/// PulseCharts does not use Foundation, so instants are plain numbers. Convert a Foundation `Date` with
/// `ChartDate(secondsSinceEpoch: date.timeIntervalSince1970)`.
public struct ChartDate: Sendable, Hashable, Comparable {
    /// Seconds since the Unix epoch; fractions are allowed.
    public var secondsSinceEpoch: Double

    /// Creates an instant from seconds since the Unix epoch.
    public init(secondsSinceEpoch: Double) {
        self.secondsSinceEpoch = secondsSinceEpoch
    }

    /// Creates an instant from a civil date and time at a fixed offset from UTC.
    ///
    /// - Parameters:
    ///   - year: The proleptic Gregorian year.
    ///   - month: 1 ... 12; values outside the range roll over into neighbouring years.
    ///   - day: 1 ... 31; values outside the range roll over into neighbouring months.
    ///   - utcOffset: Seconds east of UTC of the wall clock the other fields are read on.
    public init(
        year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Double = 0, utcOffset: Int = 0
    ) {
        let days = CivilDate.daysFromCivil(year: year, month: month, day: day)
        let local = Double(days) * 86_400 + Double(hour * 3600 + minute * 60) + second
        self.secondsSinceEpoch = local - Double(utcOffset)
    }

    /// Earlier instants sort first.
    public static func < (lhs: ChartDate, rhs: ChartDate) -> Bool {
        lhs.secondsSinceEpoch < rhs.secondsSinceEpoch
    }

    /// The instant `seconds` later.
    public func advanced(by seconds: Double) -> ChartDate {
        ChartDate(secondsSinceEpoch: secondsSinceEpoch + seconds)
    }
}
