/// What a counter's values are relative to: the kernel boot, the interface instance, and the counter width.
///
/// The daemon compares epochs instead of guessing: within one epoch a counter that goes down has wrapped (32-bit)
/// or been reset by the driver (64-bit); a new epoch (reboot, interface re-created, driver reload) restarts every
/// counter from zero. The counting rules are in `docs/windows.md` (`CountedStep` in PulseAnalytics).
public struct CounterEpoch: Sendable, Hashable {
    /// `/proc/sys/kernel/random/boot_id`, the 16 bytes of the UUID.
    public var bootID: BootID
    /// `/sys/class/net/IF/ifindex`; the kernel gives a re-created interface a new index.
    public var ifindex: UInt32
    /// How many bits the counters have before they wrap (64 on 64-bit kernels, 32 on 32-bit ones).
    public var width: CounterWidth

    public init(bootID: BootID, ifindex: UInt32, width: CounterWidth) {
        self.bootID = bootID
        self.ifindex = ifindex
        self.width = width
    }
}

/// The width of the kernel's interface counters.
public enum CounterWidth: UInt8, Sendable, Hashable {
    case bits32 = 32
    case bits64 = 64

    /// The width of `unsigned long`, which `/proc/net/dev` counters have on this kernel's architecture.
    public static var native: CounterWidth { MemoryLayout<UInt>.size == 8 ? .bits64 : .bits32 }
}

/// A kernel boot id: the UUID in `/proc/sys/kernel/random/boot_id`, as 16 bytes.
public struct BootID: Sendable, Hashable, CustomStringConvertible {
    public var high: UInt64
    public var low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Parses the canonical text form `8-4-4-4-12` hex digits (surrounding whitespace allowed).
    public init?(uuidString: some StringProtocol) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        var digits = 0
        for byte in uuidString.utf8 {
            let nibble: UInt64
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = UInt64(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = UInt64(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = UInt64(byte - UInt8(ascii: "A") + 10)
            case UInt8(ascii: "-"):
                guard [8, 12, 16, 20].contains(digits) else { return nil }
                continue
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                guard digits == 0 || digits == 32 else { return nil }
                continue
            default: return nil
            }
            if digits < 16 {
                high = high << 4 | nibble
            } else if digits < 32 {
                low = low << 4 | nibble
            } else {
                return nil
            }
            digits += 1
        }
        guard digits == 32 else { return nil }
        self.high = high
        self.low = low
    }

    public var description: String {
        let hex = Hex.string(high, width: 16) + Hex.string(low, width: 16)
        var out = ""
        for (index, character) in hex.enumerated() {
            if [8, 12, 16, 20].contains(index) { out.append("-") }
            out.append(character)
        }
        return out
    }
}

/// Fixed-width lower-case hex without Foundation.
public enum Hex {
    public static func string(_ value: UInt64, width: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
