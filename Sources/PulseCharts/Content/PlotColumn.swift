/// A column of a vectorized plot as the renderer reads it: numbers, with dates as seconds and missing values as
/// NaN. It keeps the caller's array when that array can be read this way, so a long column is neither copied nor
/// stored twice, and plots over the same instants share one column.
@usableFromInline
struct PlotColumn: Sendable {
    @usableFromInline
    enum Storage: Sendable {
        case numbers([Double])
        /// Finite instants, read in place as their seconds.
        case dates([ChartDate])
    }

    @usableFromInline var storage: Storage
    /// Numbers, dates, or nothing but missing values.
    @usableFromInline var type: ValueType

    @usableFromInline
    init(_ storage: Storage, type: ValueType) {
        self.storage = storage
        self.type = type
    }

    /// Whether `ChartDate` is laid out exactly as its one `Double`, so a column of dates can be read as numbers.
    @inlinable
    static var datesReadAsNumbers: Bool {
        MemoryLayout<ChartDate>.size == MemoryLayout<Double>.size
            && MemoryLayout<ChartDate>.stride == MemoryLayout<Double>.stride
            && MemoryLayout<ChartDate>.alignment == MemoryLayout<Double>.alignment
    }

    var count: Int {
        switch storage {
        case .numbers(let values): values.count
        case .dates(let dates): dates.count
        }
    }

    /// Calls `body` with the column's numbers.
    @usableFromInline
    func withUnsafeBufferPointer<Result>(_ body: (UnsafeBufferPointer<Double>) throws -> Result) rethrows -> Result {
        switch storage {
        case .numbers(let values):
            return try values.withUnsafeBufferPointer(body)
        case .dates(let dates):
            return try dates.withUnsafeBufferPointer { try $0.withMemoryRebound(to: Double.self, body) }
        }
    }

    /// The exponent bits of a `Double`, all set only for infinities and NaN.
    static let exponentBits: UInt64 = 0x7FF0_0000_0000_0000

    /// Whether every value is finite, in one pass without branches that the compiler can vectorize: `v * 0` is
    /// ±0 for a finite `v` and NaN otherwise, so the ORed bits have every exponent bit set only if some `v` is not.
    @usableFromInline
    static func allFinite(_ values: UnsafeBufferPointer<Double>) -> Bool {
        var bits: UInt64 = 0
        for value in values { bits |= (value * 0).bitPattern }
        return bits & exponentBits != exponentBits
    }
}
