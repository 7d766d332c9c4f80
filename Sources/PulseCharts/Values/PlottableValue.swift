/// A labelled value for a mark property, written `.value("Rate", sample.rate)` as in Swift Charts.
///
/// The label names the data in tooltips, legends and the chart's accessible description.
public struct PlottableValue<Value: Plottable>: Sendable {
    /// The name of the data, such as "Time" or "Interface".
    public var label: String
    /// The plotted value.
    public var value: Value
    /// For dates: the calendar period the value stands for, so that a bar spans the whole day or hour.
    public var unit: CalendarUnit?

    @usableFromInline
    init(label: String, value: Value, unit: CalendarUnit?) {
        self.label = label
        self.value = value
        self.unit = unit
    }

    /// A labelled value.
    @inlinable
    public static func value(_ label: String, _ value: Value) -> PlottableValue<Value> {
        PlottableValue(label: label, value: value, unit: nil)
    }

    // Marks are built once per data point in the caller's module: inlining lets the compiler specialise this for
    // the concrete value type instead of looking up generic metadata on every point.
    @inlinable
    var input: ChannelInput {
        ChannelInput(label: label, primitive: value.primitivePlottable, unit: unit)
    }
}

extension PlottableValue where Value == ChartDate {
    /// A date that stands for the whole calendar period containing it, such as a day for a daily total.
    ///
    /// Bars and rectangles span the period; lines and points sit in its middle.
    @inlinable
    public static func value(_ label: String, _ value: ChartDate, unit: CalendarUnit) -> PlottableValue<ChartDate> {
        PlottableValue(label: label, value: value, unit: unit)
    }
}

/// A type-erased plotted value as the marks store it.
@usableFromInline
struct ChannelInput: Sendable, Hashable {
    @usableFromInline var label: String
    @usableFromInline var primitive: PlottablePrimitive
    @usableFromInline var unit: CalendarUnit?

    @usableFromInline
    init(label: String, primitive: PlottablePrimitive, unit: CalendarUnit?) {
        self.label = label
        self.primitive = primitive
        self.unit = unit
    }
}
