/// A result row as a backend hands it to the decoders both dialects share: its columns read left to right, each as
/// the type the decoder asks for. A model that both stores read the same way (``Anomaly``, ``ForwardChange``,
/// ``BillAdjustment``) has its column list and its decoder here once, beside its type, instead of a near-twin in
/// each backend that only the row's API told apart.
public protocol StoreRow {
    mutating func integer() throws -> Int64
    mutating func optionalInteger() throws -> Int64?
    mutating func text() throws -> String
    mutating func optionalText() throws -> String?
}
