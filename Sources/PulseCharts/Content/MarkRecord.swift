/// The kinds of mark a chart can draw.
@usableFromInline
enum MarkKind: UInt8, Sendable, Hashable {
    case line, area, bar, point, rule, rectangle, sector
}

/// What kind of value a mark carries on one channel.
@usableFromInline
enum ValueType: UInt8, Sendable, Hashable {
    case none, missing, number, date, category
}

/// One mark, with its positions as numbers: dates as seconds, categories as indexes into the table's category
/// lists, missing values as NaN. Keys index `MarkTable.keys`; -1 means unset.
@usableFromInline
struct MarkRecord: Sendable {
    var template: Int32
    var xType: ValueType
    var yType: ValueType
    var x0: Double
    var x1: Double
    var y0: Double
    var y1: Double
    var color: Int32 = -1
    var symbol: Int32 = -1
    var position: Int32 = -1
    var series: Int32 = -1
    var extras: Int32 = -1
}

/// A data value that styles or groups marks, with the label it was given.
@usableFromInline
struct SeriesKey: Sendable, Hashable {
    @usableFromInline var label: String
    @usableFromInline var value: PlottablePrimitive
}

extension SeriesKey {
    /// The key a `foregroundStyle(by:)`, `symbol(by:)` or `position(by:)` value stands for. Written in an
    /// extension so the memberwise initializer stays for the table's own keys.
    @inlinable
    init<V: Plottable>(_ value: PlottableValue<V>) {
        self.label = value.label
        self.value = value.value.primitivePlottable
    }
}

/// Per-mark details that few marks have.
@usableFromInline
struct MarkExtras: Sendable {
    var annotations: [Annotation] = []
    var accessibilityLabel: String?
    var accessibilityValue: String?
}
