/// The resolved mapping from series values to colours.
struct ColorScale: Sendable {
    enum Mode: Sendable {
        case none, categorical, continuous
    }

    var mode: Mode = .none
    /// The data label of the series values, such as "Interface".
    var label = ""
    /// Legend entries in order: the key (an index into the mark table's keys), the name shown, the colour and,
    /// for palette colours, the palette slot (so an adaptive theme can restyle it).
    var entries: [(key: Int32, name: String, color: Color, slot: Int?)] = []
    /// Legend entry of each key in the mark table, or -1.
    var entryOfKey: [Int] = []
    /// Numeric domain and ramp for continuous colour.
    var lower = 0.0
    var upper = 1.0
    var ramp: [Color] = []
    var numberOfKey: [Double] = []

    /// The colour of a key, and its palette slot when it came from the palette.
    func color(forKey key: Int32) -> (Color, Int?)? {
        guard key >= 0, Int(key) < entryOfKey.count else { return nil }
        switch mode {
        case .none: return nil
        case .categorical:
            let entry = entryOfKey[Int(key)]
            guard entry >= 0 else { return nil }
            return (entries[entry].color, entries[entry].slot)
        case .continuous:
            let value = numberOfKey[Int(key)]
            guard value.isFinite else { return nil }
            return (rampColor(value), nil)
        }
    }

    func rampColor(_ value: Double) -> Color {
        guard ramp.count > 1 else { return ramp.first ?? .gray }
        let span = upper - lower
        let t = span > 0 ? min(max((value - lower) / span, 0), 1) : 0.5
        let scaled = t * Double(ramp.count - 1)
        let index = min(Int(scaled), ramp.count - 2)
        return ramp[index].mixed(with: ramp[index + 1], fraction: scaled - Double(index))
    }
}
