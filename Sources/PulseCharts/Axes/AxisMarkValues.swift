/// Which values an axis marks.
public struct AxisMarkValues: Sendable {
    enum Storage: Sendable {
        case automatic(desiredCount: Int?)
        case numberStride(Double)
        case calendarStride(CalendarUnit, Int)
        case explicit([PlottablePrimitive])
    }

    var storage: Storage

    /// Round values chosen so that labels fit and do not overlap.
    public static func automatic(desiredCount: Int? = nil) -> AxisMarkValues {
        AxisMarkValues(storage: .automatic(desiredCount: desiredCount))
    }

    /// Round values chosen so that labels fit and do not overlap.
    public static let automatic = AxisMarkValues.automatic()

    /// Every multiple of `step` on a quantitative axis.
    public static func stride(by step: Double) -> AxisMarkValues {
        AxisMarkValues(storage: .numberStride(step))
    }

    /// Every `count` calendar units on a time axis, aligned to the calendar (whole hours, days, weeks ...).
    public static func stride(by unit: CalendarUnit, count: Int = 1) -> AxisMarkValues {
        AxisMarkValues(storage: .calendarStride(unit, max(count, 1)))
    }

    /// Exactly these numbers.
    public static func values(_ values: [Double]) -> AxisMarkValues {
        AxisMarkValues(storage: .explicit(values.map { .number($0) }))
    }

    /// Exactly these instants.
    public static func dates(_ dates: [ChartDate]) -> AxisMarkValues {
        AxisMarkValues(storage: .explicit(dates.map { .date($0) }))
    }

    /// Exactly these categories.
    public static func categories(_ names: [String]) -> AxisMarkValues {
        AxisMarkValues(storage: .explicit(names.map { .category($0) }))
    }
}
