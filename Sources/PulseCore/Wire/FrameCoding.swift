import NIOCore

/// Splits the byte stream into frames: a 4-byte big-endian length, then that many bytes (type and payload).
///
/// A length above the limit is rejected as soon as the prefix arrives, before the body is buffered.
public struct FrameDecoder: NIOSingleStepByteToMessageDecoder {
    public typealias InboundOut = [UInt8]

    public let maximumFrameBytes: Int

    public init(maximumFrameBytes: Int) {
        self.maximumFrameBytes = maximumFrameBytes
    }

    public mutating func decode(buffer: inout ByteBuffer) throws -> [UInt8]? {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return nil }
        guard length >= 1 else { throw WireError.malformed("zero-length frame") }
        guard Int(length) <= maximumFrameBytes else {
            throw WireError.limitExceeded("frame of \(length) bytes, limit \(maximumFrameBytes)")
        }
        guard buffer.readableBytes >= WireCodec.lengthPrefixBytes + Int(length) else { return nil }
        buffer.moveReaderIndex(forwardBy: WireCodec.lengthPrefixBytes)
        return buffer.readBytes(length: Int(length))
    }

    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> [UInt8]? {
        try decode(buffer: &buffer)
    }
}

/// Writes ``WireMessage``s as frames.
public struct FrameEncoder: MessageToByteEncoder {
    public typealias OutboundIn = WireMessage

    public init() {}

    public func encode(data: WireMessage, out: inout ByteBuffer) throws {
        out.writeBytes(WireCodec.encode(data))
    }
}
