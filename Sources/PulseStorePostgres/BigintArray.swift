import NIOCore
import PostgresNIO
import PulseStore

/// A `bigint[]` parameter, written in PostgreSQL's binary array format in one pass over raw memory.
///
/// The stores send columns of numbers as arrays (`unnest($1::bigint[], …)`): a group commit's rollup rows are
/// hundreds of thousands of values. PostgresNIO's generic array encoding writes each element through several layers
/// of generic `ByteBuffer` calls; unoptimised (the debug build the tests run) that took three quarters of a
/// PostgreSQL ingest's time, and the oracle's billing case over five minutes. This writes the same bytes directly.
struct BigintArray: PostgresNonThrowingEncodable {
    static var psqlType: PostgresDataType { .int8Array }
    static var psqlFormat: PostgresFormat { .binary }

    var values: [Int64]

    init(_ values: [Int64]) { self.values = values }

    func encode<JSONEncoder: PostgresJSONEncoder>(
        into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) {
        // Header: dimensions, has-nulls flag, element type (int8); per dimension its length and lower bound (1).
        byteBuffer.writeInteger(Int32(values.isEmpty ? 0 : 1))
        byteBuffer.writeInteger(Int32(0))
        byteBuffer.writeInteger(Int32(PostgresDataType.int8.rawValue))
        guard !values.isEmpty else { return }
        byteBuffer.writeInteger(Int32(values.count))
        byteBuffer.writeInteger(Int32(1))
        // Each element: its length (8) and its value, big-endian.
        let size = values.count * 12
        byteBuffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { raw in
            values.withUnsafeBufferPointer { elements in
                var offset = 0
                for value in elements {
                    raw.storeBytes(of: UInt32(8).bigEndian, toByteOffset: offset, as: UInt32.self)
                    raw.storeBytes(of: value.bigEndian, toByteOffset: offset + 4, as: Int64.self)
                    offset += 12
                }
            }
            return size
        }
    }
}

extension BigintArray {
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    /// The values of a `bigint[]` cell in the binary format (one dimension, no NULL), read in one pass: a row of
    /// many numbers read as one array cell costs PostgresNIO one cell instead of one per column.
    static func decode(_ cell: PostgresCell) throws -> [Int64] {
        guard let bytes = cell.bytes, cell.format == .binary else { throw Malformed(description: "not a binary array") }
        return try bytes.withUnsafeReadableBytes { raw -> [Int64] in
            func integer(_ offset: Int) -> Int32 {
                Int32(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int32.self))
            }
            guard raw.count >= 12, integer(4) == 0, integer(8) == Int32(PostgresDataType.int8.rawValue) else {
                throw Malformed(description: "not a bigint[] without NULL")
            }
            let dimensions = integer(0)
            guard dimensions == 1 else {
                if dimensions == 0 { return [] }
                throw Malformed(description: "a bigint[] of \(dimensions) dimensions")
            }
            let count = Int(integer(12))
            guard count >= 0, raw.count == 20 + count * 12 else { throw Malformed(description: "a truncated bigint[]") }
            return try [Int64](unsafeUninitializedCapacity: count) { elements, initialized in
                var offset = 20
                for index in 0..<count {
                    guard integer(offset) == 8 else {
                        throw Malformed(description: "a bigint[] element not of 8 bytes")
                    }
                    elements[index] = Int64(bigEndian: raw.loadUnaligned(fromByteOffset: offset + 4, as: Int64.self))
                    offset += 12
                    initialized = index + 1
                }
            }
        }
    }
}

extension PostgresBindings {
    /// Columns of numbers bind as ``BigintArray``: this overload is chosen over PostgresNIO's generic one for every
    /// `[Int64]` the stores append.
    mutating func append(_ values: [Int64]) {
        append(BigintArray(values))
    }
}
