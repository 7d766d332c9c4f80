/// One of the sixteen per-interface counters that Linux reports in `/proc/net/dev`, in the kernel's column order.
///
/// The raw values are the wire order too: a counter's bit in a ``CounterMask`` is `1 << rawValue`.
public enum Counter: Int, CaseIterable, Sendable, Hashable {
    case rxBytes, rxPackets, rxErrors, rxDropped, rxFifo, rxFrame, rxCompressed, rxMulticast
    case txBytes, txPackets, txErrors, txDropped, txFifo, txCollisions, txCarrier, txCompressed

    /// The number of counters per interface.
    public static let count = 16

    /// The column name used in exports, the store and the docs (`rx_bytes`, `tx_carrier` …).
    public var name: String {
        switch self {
        case .rxBytes: "rx_bytes"
        case .rxPackets: "rx_packets"
        case .rxErrors: "rx_errors"
        case .rxDropped: "rx_dropped"
        case .rxFifo: "rx_fifo"
        case .rxFrame: "rx_frame"
        case .rxCompressed: "rx_compressed"
        case .rxMulticast: "rx_multicast"
        case .txBytes: "tx_bytes"
        case .txPackets: "tx_packets"
        case .txErrors: "tx_errors"
        case .txDropped: "tx_dropped"
        case .txFifo: "tx_fifo"
        case .txCollisions: "tx_collisions"
        case .txCarrier: "tx_carrier"
        case .txCompressed: "tx_compressed"
        }
    }
}

/// The sixteen cumulative counters of one interface at one instant.
///
/// Stored as a fixed-size array indexed by ``Counter/rawValue``, so codecs can loop over it without a switch.
public struct CounterValues: Sendable, Hashable {
    public var values: [UInt64]

    /// All counters zero.
    public init() {
        values = [UInt64](repeating: 0, count: Counter.count)
    }

    /// Counters from an array in ``Counter`` order; the array must hold exactly sixteen values.
    public init?(_ values: [UInt64]) {
        guard values.count == Counter.count else { return nil }
        self.values = values
    }

    public subscript(counter: Counter) -> UInt64 {
        get { values[counter.rawValue] }
        set { values[counter.rawValue] = newValue }
    }
}
