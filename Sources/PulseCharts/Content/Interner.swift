/// Gives each distinct value a stable index in order of first appearance.
struct Interner<Value: Hashable & Sendable>: Sendable {
    private(set) var values: [Value] = []
    private var indexes: [Value: Int32] = [:]
    // Data usually arrives grouped by series, so the last few values answer almost every lookup without hashing.
    private var recent: [(Value, Int32)] = []

    mutating func intern(_ value: Value) -> Int32 {
        for (candidate, index) in recent where candidate == value {
            return index
        }
        let index: Int32
        if let known = indexes[value] {
            index = known
        } else {
            index = Int32(values.count)
            values.append(value)
            indexes[value] = index
        }
        if recent.count == 4 { recent.removeFirst() }
        recent.append((value, index))
        return index
    }

    func index(of value: Value) -> Int32? {
        indexes[value]
    }

    var count: Int { values.count }
}
