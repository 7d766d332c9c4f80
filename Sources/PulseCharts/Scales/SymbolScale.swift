/// The resolved mapping from series values to symbol shapes.
struct SymbolScale: Sendable {
    var label = ""
    var entries: [(key: Int32, name: String, symbol: ChartSymbol)] = []
    var entryOfKey: [Int] = []

    func symbol(forKey key: Int32) -> ChartSymbol? {
        guard key >= 0, Int(key) < entryOfKey.count else { return nil }
        let entry = entryOfKey[Int(key)]
        return entry >= 0 ? entries[entry].symbol : nil
    }
}
