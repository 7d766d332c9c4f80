import PulseCore

/// The bounded on-disk queue of batches the daemon has not acknowledged yet.
///
/// One file per batch, `NNNNNNNNNNNNNNNNNNNN.np2` (a 20-digit ordinal that only grows, across restarts too), each
/// holding a `DESCRIBE` and a `BATCH` frame of protocol version 2 exactly as they go on the wire, written
/// atomically. Files are replayed in ordinal order and deleted when acknowledged. When the spool would exceed its
/// size bound the oldest files are dropped and counted. Blocking file I/O: not for event loops.
///
/// A spool written by a version 1 agent (`.npb` files, batches without order, interval or heartbeat) is converted
/// when it is opened: each batch keeps its stream and sequence (so the daemon still recognises one it already
/// stored) and gets an order before every new batch, and the interval and heartbeat configured now.
public struct Spool: Sendable {
    public struct Entry: Sendable, Hashable {
        public var ordinal: UInt64
        public var stream: UInt64
        public var sequence: UInt64
        public var bytes: Int
        /// The drops of earlier batches this batch reports (lost with it if it is dropped in turn).
        public var droppedBefore: UInt64
    }

    public let directory: String
    public let maximumBytes: Int64
    public private(set) var entries: [Entry] = []
    public private(set) var totalBytes: Int64 = 0
    private var nextOrdinal: UInt64 = 1
    /// Files that could not be decoded when the spool was opened, moved to `corrupt/`.
    public private(set) var quarantined: [String] = []

    static let suffix = ".np2"
    static let legacySuffix = ".npb"

    /// How a version 1 spool's batches are completed when it is converted.
    public struct LegacyConversion {
        public var interval: Int64
        public var heartbeat: Int64
        public var nextOrder: () throws -> UInt64

        public init(interval: Int64, heartbeat: Int64, nextOrder: @escaping () throws -> UInt64) {
            self.interval = interval
            self.heartbeat = heartbeat
            self.nextOrder = nextOrder
        }
    }

    /// Opens (creating if needed) the spool in `directory` and indexes the batches already there.
    ///
    /// - Parameter legacy: how to convert batches of a version 1 spool; without it they are left alone.
    public init(directory: String, maximumBytes: Int64, legacy: LegacyConversion? = nil) throws {
        self.directory = directory
        self.maximumBytes = maximumBytes
        try FileIO.createDirectory(directory, mode: 0o750)
        if let legacy {
            quarantined = try Self.convertLegacy(try FileIO.listDirectory(directory), in: directory, legacy)
        }
        var found = [Entry]()
        for name in try FileIO.listDirectory(directory) {
            if name.contains(".tmp-") {
                // A write that a crash interrupted before its rename: never acknowledged, never complete.
                try? FileIO.remove("\(directory)/\(name)")
                continue
            }
            guard name.hasSuffix(Self.suffix), let ordinal = UInt64(name.dropLast(Self.suffix.count)) else { continue }
            let path = "\(directory)/\(name)"
            do {
                let bytes = try FileIO.readBytes(path)
                let record = try Self.decode(bytes)
                found.append(
                    Entry(
                        ordinal: ordinal, stream: record.batch.stream, sequence: record.batch.sequence,
                        bytes: bytes.count, droppedBefore: record.batch.droppedBefore))
            } catch {
                try? FileIO.createDirectory("\(directory)/corrupt", mode: 0o750)
                _ = rename(path, "\(directory)/corrupt/\(name)")
                quarantined.append(name)
            }
        }
        entries = found.sorted { $0.ordinal < $1.ordinal }
        totalBytes = entries.reduce(0) { $0 + Int64($1.bytes) }
        nextOrdinal = (entries.last?.ordinal ?? 0) + 1
    }

    private func path(_ ordinal: UInt64) -> String { "\(directory)/\(Self.fileName(ordinal))" }

    static func fileName(_ ordinal: UInt64) -> String {
        let digits = String(ordinal)
        return "\(String(repeating: "0", count: max(0, 20 - digits.count)))\(digits)\(suffix)"
    }

    /// Stores a record durably and returns how many old batches were dropped to stay within the bound, and the
    /// earlier drops those batches were carrying to the daemon.
    @discardableResult
    public mutating func append(_ record: SpoolRecord) throws -> (dropped: Int, theirDrops: UInt64) {
        let bytes = record.bytes
        let ordinal = nextOrdinal
        try FileIO.writeAtomically(path(ordinal), bytes, mode: 0o640)
        nextOrdinal += 1
        entries.append(
            Entry(
                ordinal: ordinal, stream: record.stream, sequence: record.sequence, bytes: bytes.count,
                droppedBefore: record.batch.droppedBefore))
        totalBytes += Int64(bytes.count)
        var dropped = 0
        var theirDrops: UInt64 = 0
        while totalBytes > maximumBytes, entries.count > 1 {
            let oldest = entries.removeFirst()
            totalBytes -= Int64(oldest.bytes)
            try? FileIO.remove(path(oldest.ordinal))
            dropped += 1
            theirDrops += oldest.droppedBefore
        }
        return (dropped, theirDrops)
    }

    /// The stored bytes of an entry.
    public func read(_ entry: Entry) throws -> [UInt8] {
        try FileIO.readBytes(path(entry.ordinal))
    }

    /// Deletes the entry for an acknowledged batch; returns false when it is not (or no longer) spooled.
    @discardableResult
    public mutating func remove(stream: UInt64, sequence: UInt64) -> Bool {
        guard let index = entries.firstIndex(where: { $0.stream == stream && $0.sequence == sequence }) else {
            return false
        }
        let entry = entries.remove(at: index)
        totalBytes -= Int64(entry.bytes)
        try? FileIO.remove(path(entry.ordinal))
        return true
    }

    /// Splits a spool file back into its frames.
    ///
    /// - Parameter version: the protocol version the file was written with (1 only for a legacy `.npb` file).
    public static func decode(
        _ bytes: [UInt8], version: UInt8 = ProtocolVersion.maximum
    ) throws -> (describe: Describe, batch: WireBatch) {
        let frames = try WireCodec.frames(in: bytes)
        guard frames.count == 2, case .describe(let describe) = try WireCodec.decode(frames[0], version: version),
            case .batch(let batch) = try WireCodec.decode(frames[1], version: version)
        else { throw WireError.malformed("spool file is not DESCRIBE + BATCH") }
        return (describe, batch)
    }

    /// Rewrites each version 1 file as a version 2 file with the same ordinal, oldest first; a file that cannot be
    /// decoded is left for the quarantine below.
    private static func convertLegacy(
        _ names: [String], in directory: String, _ legacy: LegacyConversion
    ) throws -> [String] {
        var unreadable = [String]()
        let legacyFiles = names.compactMap { name -> (UInt64, String)? in
            guard name.hasSuffix(legacySuffix), let ordinal = UInt64(name.dropLast(legacySuffix.count)) else {
                return nil
            }
            return (ordinal, name)
        }.sorted { $0.0 < $1.0 }
        for (ordinal, name) in legacyFiles {
            let path = "\(directory)/\(name)"
            guard let (describe, old) = try? decode(try FileIO.readBytes(path), version: 1) else {
                try? FileIO.createDirectory("\(directory)/corrupt", mode: 0o750)
                _ = rename(path, "\(directory)/corrupt/\(name)")
                unreadable.append(name)
                continue
            }
            var batch = old
            batch.order = try legacy.nextOrder()
            batch.interval = UInt64(legacy.interval)
            batch.heartbeat = UInt64(legacy.heartbeat)
            let record = SpoolRecord(stream: batch.stream, sequence: batch.sequence, describe: describe, batch: batch)
            try FileIO.writeAtomically("\(directory)/\(fileName(ordinal))", record.bytes, mode: 0o640)
            try FileIO.remove(path)
        }
        return unreadable
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
