import PulseCore

/// The eight counters Netpulse rolls up, in the order of the rollup columns (`docs/windows.md`).
public enum TrafficCounter: Int, CaseIterable, Sendable {
    case rxBytes, txBytes, rxPackets, txPackets, rxErrors, txErrors, rxDropped, txDropped

    /// The kernel counter this one is taken from.
    public var source: Counter {
        switch self {
        case .rxBytes: .rxBytes
        case .txBytes: .txBytes
        case .rxPackets: .rxPackets
        case .txPackets: .txPackets
        case .rxErrors: .rxErrors
        case .txErrors: .txErrors
        case .rxDropped: .rxDropped
        case .txDropped: .txDropped
        }
    }

    /// The column name in the store, exports and docs.
    public var name: String {
        switch self {
        case .rxBytes: "rx_bytes"
        case .txBytes: "tx_bytes"
        case .rxPackets: "rx_packets"
        case .txPackets: "tx_packets"
        case .rxErrors: "rx_errors"
        case .txErrors: "tx_errors"
        case .rxDropped: "rx_dropped"
        case .txDropped: "tx_dropped"
        }
    }

    /// Bytes, or a count of packets (errors and drops are packets too).
    public var isBytes: Bool { self == .rxBytes || self == .txBytes }
}

/// Eight values in ``TrafficCounter`` order: cumulative counters of a sample, or what a step or bucket counted.
///
/// A SIMD vector: no heap allocation, and element-wise arithmetic for the hot ingest path.
public typealias Traffic = SIMD8<UInt64>

/// Signed per-counter amounts (bucket changes, which are negative when a step is taken out again).
public typealias TrafficDelta = SIMD8<Int64>

extension SIMD8 where Scalar == UInt64 {
    /// The rolled-up counters of a sample's sixteen kernel counters.
    public init(rolledUpFrom counters: CounterValues) {
        self.init(
            counters[.rxBytes], counters[.txBytes], counters[.rxPackets], counters[.txPackets],
            counters[.rxErrors], counters[.txErrors], counters[.rxDropped], counters[.txDropped])
    }

    /// The same from sixteen kernel counters stored sample-major in `values` from `offset`.
    public init(rolledUpFrom values: [UInt64], offset: Int) {
        self.init(
            values[offset + Counter.rxBytes.rawValue], values[offset + Counter.txBytes.rawValue],
            values[offset + Counter.rxPackets.rawValue], values[offset + Counter.txPackets.rawValue],
            values[offset + Counter.rxErrors.rawValue], values[offset + Counter.txErrors.rawValue],
            values[offset + Counter.rxDropped.rawValue], values[offset + Counter.txDropped.rawValue])
    }

    public subscript(counter: TrafficCounter) -> UInt64 {
        get { self[counter.rawValue] }
        set { self[counter.rawValue] = newValue }
    }
}

extension SIMD8 where Scalar == Int64 {
    public subscript(counter: TrafficCounter) -> Int64 {
        get { self[counter.rawValue] }
        set { self[counter.rawValue] = newValue }
    }
}
