/// Reads the protocol's primitives from bytes that came from a peer, so every read is bounds-checked and every
/// failure is a ``WireError`` rather than a trap.
public struct WireReader: Sendable {
    private let bytes: [UInt8]
    public private(set) var position: Int
    private let end: Int
    private var bitPosition = 0  // bits consumed of bytes[position] while inside a bit block

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        position = 0
        end = bytes.count
    }

    public var remaining: Int { end - position }
    public var isAtEnd: Bool { position == end && bitPosition == 0 }

    public mutating func readByte() throws(WireError) -> UInt8 {
        guard bitPosition == 0 else { throw .malformed("byte read inside a bit block") }
        guard position < end else { throw .truncated }
        defer { position += 1 }
        return bytes[position]
    }

    public mutating func readBytes(_ count: Int) throws(WireError) -> ArraySlice<UInt8> {
        guard bitPosition == 0 else { throw .malformed("byte read inside a bit block") }
        guard count >= 0, count <= remaining else { throw .truncated }
        defer { position += count }
        return bytes[position..<position + count]
    }

    public mutating func readUInt16() throws(WireError) -> UInt16 {
        let high = try readByte()
        return UInt16(high) << 8 | UInt16(try readByte())
    }

    public mutating func readUInt64() throws(WireError) -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(try readByte()) }
        return value
    }

    /// Unsigned LEB128, at most ten bytes; overlong or overflowing encodings are rejected.
    public mutating func readVarint() throws(WireError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readByte()
            if shift == 63 && byte > 1 { throw .malformed("varint overflows 64 bits") }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                if byte == 0 && shift > 0 { throw .malformed("overlong varint") }
                return value
            }
            shift += 7
        }
    }

    /// A varint that must not exceed `limit`, named in the error when it does.
    public mutating func readVarint(max limit: UInt64, _ field: StaticString) throws(WireError) -> UInt64 {
        let value = try readVarint()
        guard value <= limit else { throw .limitExceeded("\(field) is \(value), limit \(limit)") }
        return value
    }

    /// Length-prefixed bytes, the length bounded before anything is read.
    public mutating func readLengthPrefixed(max limit: Int, _ field: StaticString) throws(WireError) -> ArraySlice<
        UInt8
    > {
        let length = try readVarint(max: UInt64(limit), field)
        return try readBytes(Int(length))
    }

    /// A length-prefixed UTF-8 string; invalid UTF-8 is rejected rather than repaired.
    public mutating func readString(max limit: Int, _ field: StaticString) throws(WireError) -> String {
        let raw = try readLengthPrefixed(max: limit, field)
        guard let string = String(validating: raw, as: UTF8.self) else { throw .malformed("\(field) is not UTF-8") }
        return string
    }

    // MARK: Bit blocks

    public mutating func readBit() throws(WireError) -> UInt64 {
        guard position < end else { throw .truncated }
        let bit = UInt64(bytes[position] >> UInt8(7 - bitPosition)) & 1
        bitPosition += 1
        if bitPosition == 8 {
            bitPosition = 0
            position += 1
        }
        return bit
    }

    public mutating func readBits(_ count: Int) throws(WireError) -> UInt64 {
        var value: UInt64 = 0
        var needed = count
        while needed > 0 {
            guard position < end else { throw .truncated }
            let available = 8 - bitPosition
            let take = min(available, needed)
            let byte = UInt64(bytes[position])
            let chunk = (byte >> UInt64(available - take)) & ((1 << UInt64(take)) - 1)
            value = value << UInt64(take) | chunk
            needed -= take
            bitPosition += take
            if bitPosition == 8 {
                bitPosition = 0
                position += 1
            }
        }
        return value
    }

    /// Reads a Rice code written by ``WireWriter/writeRice(_:k:)``.
    public mutating func readRice(k: Int) throws(WireError) -> UInt64 {
        var quotient: UInt64 = 0
        while try readBit() == 1 {
            quotient += 1
            if quotient == UInt64(RiceCode.escapeQuotient) {
                let length = Int(try readBits(7))
                guard length <= 64 else { throw .malformed("Rice escape length \(length) exceeds 64 bits") }
                return try readBits(length)
            }
        }
        return quotient << UInt64(k) | (k == 0 ? 0 : try readBits(k))
    }

    /// Skips the padding at the end of a bit block; the padding must be zero so a frame has one encoding.
    public mutating func alignToByte() throws(WireError) {
        guard bitPosition != 0 else { return }
        let padding = try readBits(8 - bitPosition)
        guard padding == 0 else { throw .malformed("non-zero padding after a bit block") }
    }
}

/// Why bytes from a peer could not be decoded.
public enum WireError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The frame ended before a field did.
    case truncated
    /// A field has a value the protocol does not allow.
    case malformed(String)
    /// A length or count is above the protocol's or the peer's limit.
    case limitExceeded(String)
    /// The frame type byte is not one this version knows.
    case unknownFrameType(UInt8)
    /// The peer speaks no protocol version we do.
    case unsupportedVersion(String)

    public var description: String {
        switch self {
        case .truncated: "frame ends in the middle of a field"
        case .malformed(let why): "malformed frame: \(why)"
        case .limitExceeded(let why): "limit exceeded: \(why)"
        case .unknownFrameType(let type): "unknown frame type 0x\(Hex.string(UInt64(type), width: 2))"
        case .unsupportedVersion(let why): "unsupported protocol version: \(why)"
        }
    }
}
