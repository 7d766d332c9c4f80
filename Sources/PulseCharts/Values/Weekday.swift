/// A day of the week.
public enum Weekday: Int, Sendable, Hashable, CaseIterable, Plottable {
    case monday = 1, tuesday, wednesday, thursday, friday, saturday, sunday

    /// Creates a weekday from Foundation's numbering, where 1 is Sunday and 7 is Saturday.
    ///
    /// Use it to pass the locale's first weekday: `Weekday(foundationWeekday: Calendar.current.firstWeekday)`.
    /// Returns nil outside 1 ... 7.
    public init?(foundationWeekday: Int) {
        guard (1...7).contains(foundationWeekday) else { return nil }
        self.init(rawValue: foundationWeekday == 1 ? 7 : foundationWeekday - 1)
    }

    /// The English three-letter abbreviation, such as "Mon".
    public var shortName: String {
        Weekday.englishShortNames[rawValue - 1]
    }

    /// The seven weekdays in order, starting at `first`.
    public static func ordered(startingAt first: Weekday) -> [Weekday] {
        (0..<7).map { Weekday(rawValue: (first.rawValue - 1 + $0) % 7 + 1) ?? .monday }
    }

    public var primitivePlottable: PlottablePrimitive { .category(shortName) }

    static let englishShortNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
}
