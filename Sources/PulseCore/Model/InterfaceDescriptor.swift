/// Names an interface and its counter epoch once per connection, so that batches can refer to it by a small id.
///
/// Ids are allocated by the agent per stream (see ``WireBatch/stream``) and never change meaning within it.
public struct InterfaceDescriptor: Sendable, Hashable {
    /// The id batches use for this interface, unique within the stream.
    public var id: UInt32
    /// The kernel's interface name, as raw bytes: Linux allows any byte but `/`, `:`, whitespace and NUL.
    public var name: InterfaceName
    public var epoch: CounterEpoch
    /// When the epoch began at the earliest, as the agent knows it (ms since the Unix epoch, its own clock): the
    /// boot time for an interface the agent found when it started, the tick before it first saw one that appeared
    /// later. `nil` when unknown (older agents, or a daemon without the `epoch-start` capability). Counts of the
    /// epoch are never placed before it (`docs/windows.md`, "Counting a step").
    public var began: Int64?

    public init(id: UInt32, name: InterfaceName, epoch: CounterEpoch, began: Int64? = nil) {
        self.id = id
        self.name = name
        self.epoch = epoch
        self.began = began
    }
}

/// An interface name as the kernel spells it.
///
/// Kept as bytes because Linux names need not be UTF-8; ``description`` is its text form.
public struct InterfaceName: Sendable, Hashable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The longest name the protocol carries (the kernel's own limit is 15 bytes).
    public static let maximumLength = 64

    public var bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }
    public init(_ string: String) { self.bytes = Array(string.utf8) }
    public init(stringLiteral value: String) { self.init(value) }

    /// The name's text form (`docs/protocol.md`, "Interface descriptors"): its UTF-8 as it is, except that every
    /// byte that is not part of valid UTF-8, every control character (C0, DEL and C1) and the backslash are written
    /// `\xHH` (two lowercase hex digits per byte). Different names have different text forms, ``init(text:)``
    /// turns one back into the bytes, and no form holds a control character.
    public var description: String {
        if bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        var text = ""
        func escape(_ slice: ArraySlice<UInt8>) {
            for byte in slice {
                text += "\\x"
                text += Hex.string(UInt64(byte), width: 2)
            }
        }
        var iterator = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        var position = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                let scalar = Unicode.UTF8.decode(encoded)
                let length = encoded.count
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\\" {
                    escape(bytes[position..<position + length])
                } else {
                    text.unicodeScalars.append(scalar)
                }
                position += length
            case .error(let length):
                escape(bytes[position..<position + length])
                position += length
            case .emptyInput:
                return text
            }
        }
    }

    /// The name whose text form (``description``) is `text`; nil when `text` has a backslash that does not start
    /// a `\xHH` escape.
    public init?(text: String) {
        var bytes = [UInt8]()
        let utf8 = Array(text.utf8)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "\\") {
                guard index + 3 < utf8.count, utf8[index + 1] == UInt8(ascii: "x"),
                    let value = UInt8(String(decoding: utf8[index + 2...index + 3], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
                index += 4
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        self.bytes = bytes
    }

    /// Why the protocol refuses this name, or nil (`docs/protocol.md`, "Interface descriptors"): a `/` (it would
    /// make a path of a file name), or a control byte (NUL breaks text columns, the rest terminals and logs).
    public var violation: String? {
        if bytes.contains(UInt8(ascii: "/")) { return "interface name \(self) has a '/'" }
        if bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            return "interface name \(self) has a control character"
        }
        return nil
    }

    public static func < (lhs: InterfaceName, rhs: InterfaceName) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}

/// Slow-changing link facts from `/sys/class/net/IF/`, sampled less often than the counters.
public struct LinkState: Sendable, Hashable {
    /// Link speed in Mbit/s; `nil` when the kernel does not know it (virtual interfaces, link down).
    public var speedMbps: UInt32?
    public var operState: OperState
    /// `nil` when the carrier cannot be read (the interface is down).
    public var carrier: Bool?
    public var mtu: UInt32
    /// What kind of interface this is, so that totals do not count the same bytes twice (a bond and its slaves).
    public var kind: InterfaceKind
    public var relation: InterfaceRelation

    public init(
        speedMbps: UInt32?, operState: OperState, carrier: Bool?, mtu: UInt32, kind: InterfaceKind = .unknown,
        relation: InterfaceRelation = []
    ) {
        self.speedMbps = speedMbps
        self.operState = operState
        self.carrier = carrier
        self.mtu = mtu
        self.kind = kind
        self.relation = relation
    }
}

/// What an interface is, as `/sys/class/net/IF/` tells: totals of a host count physical and bond interfaces and
/// leave out those that carry bytes another interface already counted (`docs/windows.md`).
public enum InterfaceKind: UInt8, Sendable, Hashable, CaseIterable {
    case unknown = 0
    /// Backed by a device (`/sys/class/net/IF/device`): a NIC.
    case physical
    case bond
    case bridge
    /// A VLAN child of another interface (`DEVTYPE=vlan`).
    case vlan
    case veth
    case loopback
    /// Tunnels and VPNs (ipip, gre, sit, WireGuard, tun): their bytes also cross a physical interface.
    case tunnel
    /// Any other virtual interface (dummy, macvlan, ifb …).
    case virtual

    public var name: String {
        switch self {
        case .unknown: "unknown"
        case .physical: "physical"
        case .bond: "bond"
        case .bridge: "bridge"
        case .vlan: "vlan"
        case .veth: "veth"
        case .loopback: "loopback"
        case .tunnel: "tunnel"
        case .virtual: "virtual"
        }
    }

    public init?(name: String) {
        guard let kind = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = kind
    }
}

/// How an interface hangs under another one.
public struct InterfaceRelation: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Enslaved to a bond (`/sys/class/net/IF/bonding_slave`): the bond counts its bytes.
    public static let bondSlave = InterfaceRelation(rawValue: 1 << 0)
    /// A port of a bridge (`/sys/class/net/IF/brport`).
    public static let bridgePort = InterfaceRelation(rawValue: 1 << 1)

    public static let all: InterfaceRelation = [.bondSlave, .bridgePort]
}

/// RFC 2863 operational state, as in `/sys/class/net/IF/operstate`.
public enum OperState: UInt8, Sendable, Hashable, CaseIterable {
    case unknown = 0, notPresent, down, lowerLayerDown, testing, dormant, up

    public init(sysfs text: some StringProtocol) {
        switch text.trimmingWhitespace() {
        case "notpresent": self = .notPresent
        case "down": self = .down
        case "lowerlayerdown": self = .lowerLayerDown
        case "testing": self = .testing
        case "dormant": self = .dormant
        case "up": self = .up
        default: self = .unknown
        }
    }

    public var name: String {
        switch self {
        case .unknown: "unknown"
        case .notPresent: "notpresent"
        case .down: "down"
        case .lowerLayerDown: "lowerlayerdown"
        case .testing: "testing"
        case .dormant: "dormant"
        case .up: "up"
        }
    }
}

extension StringProtocol {
    /// The string without leading and trailing ASCII whitespace (no Foundation).
    public func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
