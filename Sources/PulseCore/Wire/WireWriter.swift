/// Appends the protocol's primitives to a byte array: fixed-width integers, LEB128 varints, length-prefixed
/// bytes, and bit-packed Rice codes.
///
/// Bits are written most-significant first and every bit block ends on a byte boundary (``alignToByte()``), so
/// byte-level fields can follow.
public struct WireWriter: Sendable {
    public private(set) var bytes: [UInt8]
    private var bitAccumulator: UInt64 = 0
    private var bitCount = 0

    public init(reservingCapacity capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public mutating func writeByte(_ value: UInt8) {
        precondition(bitCount == 0, "byte write inside a bit block")
        bytes.append(value)
    }

    public mutating func writeBytes(_ values: some Sequence<UInt8>) {
        precondition(bitCount == 0, "byte write inside a bit block")
        bytes.append(contentsOf: values)
    }

    public mutating func writeUInt16(_ value: UInt16) {
        writeByte(UInt8(truncatingIfNeeded: value >> 8))
        writeByte(UInt8(truncatingIfNeeded: value))
    }

    public mutating func writeUInt64(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) {
            writeByte(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    /// Unsigned LEB128: seven bits per byte, low groups first.
    public mutating func writeVarint(_ value: UInt64) {
        precondition(bitCount == 0, "byte write inside a bit block")
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// A varint length followed by the bytes.
    public mutating func writeLengthPrefixed(_ values: some Collection<UInt8>) {
        writeVarint(UInt64(values.count))
        writeBytes(values)
    }

    public mutating func writeString(_ string: String) {
        writeLengthPrefixed(Array(string.utf8))
    }

    /// Appends the low `count` bits of `value` (0…64 bits).
    public mutating func writeBits(_ value: UInt64, count: Int) {
        guard count > 0 else { return }
        if count > 32 {
            writeBits(value >> 32, count: count - 32)
            writeBits(value & 0xFFFF_FFFF, count: 32)
            return
        }
        let masked = count == 64 ? value : value & ((1 << UInt64(count)) - 1)
        bitAccumulator = bitAccumulator << UInt64(count) | masked
        bitCount += count
        while bitCount >= 8 {
            bitCount -= 8
            bytes.append(UInt8(truncatingIfNeeded: bitAccumulator >> UInt64(bitCount)))
        }
        bitAccumulator &= (1 << UInt64(bitCount)) - 1
    }

    /// Writes a Rice code of `value` with parameter `k` (see ``RiceCode``).
    public mutating func writeRice(_ value: UInt64, k: Int) {
        let quotient = value >> UInt64(k)
        if quotient < UInt64(RiceCode.escapeQuotient) {
            // `quotient` ones then a zero, then the k low bits.
            writeBits((1 << (quotient + 1)) - 2, count: Int(quotient) + 1)
            writeBits(value, count: k)
        } else {
            let length = RiceCode.bitLength(value)
            writeBits((1 << UInt64(RiceCode.escapeQuotient)) - 1, count: RiceCode.escapeQuotient)
            writeBits(UInt64(length), count: 7)
            writeBits(value, count: length)
        }
    }

    /// Pads the current bit block with zero bits to the next byte boundary.
    public mutating func alignToByte() {
        if bitCount > 0 { writeBits(0, count: 8 - bitCount) }
    }
}

/// The Rice code the protocol uses for counter and timestamp residuals.
///
/// A value `v` with parameter `k` is `v >> k` in unary (ones ended by a zero) followed by the `k` low bits. Values
/// whose quotient would reach ``escapeQuotient`` are written as that many ones, a 7-bit length and the raw bits,
/// so no value costs more than 87 bits whatever `k` is.
public enum RiceCode {
    public static let escapeQuotient = 16
    public static let maximumK = 63

    /// The number of bits the code of `value` takes with parameter `k`.
    @inline(__always)
    public static func cost(_ value: UInt64, k: Int) -> Int {
        let quotient = value >> UInt64(k)
        return quotient < UInt64(escapeQuotient) ? Int(quotient) + 1 + k : escapeQuotient + 7 + bitLength(value)
    }

    @inline(__always)
    public static func bitLength(_ value: UInt64) -> Int { 64 - value.leadingZeroBitCount }

    /// ZigZag: small negative and positive residuals become small unsigned values.
    @inline(__always)
    public static func zigzag(_ value: UInt64) -> UInt64 {
        let signed = Int64(bitPattern: value)
        return UInt64(bitPattern: (signed << 1) ^ (signed >> 63))
    }

    @inline(__always)
    public static func unzigzag(_ value: UInt64) -> UInt64 {
        (value >> 1) ^ (0 &- (value & 1))
    }
}
