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
    /// The ordinal the next record will get: entries below it were made before.
    public private(set) var nextOrdinal: UInt64 = 1
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
            if Self.isInterruptedWrite(name) {
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
        // Ordinals also continue after those set aside, so a batch an operator moves back from `rejected/` (or
        // `corrupt/`) never meets a newer file of the same name.
        var highest = entries.last?.ordinal ?? 0
        for aside in ["rejected", "corrupt"] {
            for name in (try? FileIO.listDirectory("\(directory)/\(aside)")) ?? [] where name.hasSuffix(Self.suffix) {
                highest = max(highest, UInt64(name.dropLast(Self.suffix.count)) ?? 0)
            }
        }
        nextOrdinal = highest + 1
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
        let write = reserve(record)
        try write.perform()
        return add(write)
    }

    /// A record with the name it will have in the spool, to be written by ``perform()`` (blocking disk I/O, which
    /// may run on any thread) and then indexed by ``add(_:)``: so the agent writes its spool away from the loops that
    /// must not wait for a slow disk.
    public struct Write: Sendable {
        public let path: String
        public let ordinal: UInt64
        public let stream: UInt64
        public let sequence: UInt64
        /// The drops of earlier batches this batch reports.
        public let droppedBefore: UInt64
        /// Only the encoded bytes are kept, not the decoded record (ten and more times their size): batches waiting
        /// for a slow disk are bounded by these bytes.
        let bytes: [UInt8]

        public var size: Int { bytes.count }

        /// Writes the file atomically and durably (fsync of the file and of the directory).
        public func perform() throws(FileIO.Failure) {
            try FileIO.writeAtomically(path, bytes, mode: 0o640)
        }
    }

    /// Names the next record; writes must be added in the order they were reserved.
    public mutating func reserve(_ record: SpoolRecord) -> Write {
        defer { nextOrdinal += 1 }
        return Write(
            path: path(nextOrdinal), ordinal: nextOrdinal, stream: record.stream, sequence: record.sequence,
            droppedBefore: record.batch.droppedBefore, bytes: record.bytes)
    }

    /// Indexes a written record, then drops the oldest batches while the spool is over its bound; returns how many
    /// were dropped and the earlier drops those were carrying to the daemon.
    public mutating func add(_ write: Write) -> (dropped: Int, theirDrops: UInt64) {
        entries.append(
            Entry(
                ordinal: write.ordinal, stream: write.stream, sequence: write.sequence, bytes: write.bytes.count,
                droppedBefore: write.droppedBefore))
        totalBytes += Int64(write.bytes.count)
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
        guard let index = index(stream: stream, sequence: sequence) else { return false }
        let entry = unindex(at: index)
        try? FileIO.remove(path(entry.ordinal))
        return true
    }

    private func index(stream: UInt64, sequence: UInt64) -> Int? {
        entries.firstIndex { $0.stream == stream && $0.sequence == sequence }
    }

    /// Takes an entry out of the queue (its file is the caller's).
    private mutating func unindex(at index: Int) -> Entry {
        let entry = entries.remove(at: index)
        totalBytes -= Int64(entry.bytes)
        return entry
    }

    /// The directory, beside the spool's files, of batches the daemon refused for good.
    public var rejectedDirectory: String { "\(directory)/rejected" }

    /// Moves the entry of a batch the daemon refused for good out of the queue into `rejected/` (a dead letter),
    /// with a text file beside it saying why; returns the batch's new path, or `nil` when it is not spooled.
    ///
    /// A rejected batch is kept unchanged, so an operator can send it again: moved back into the spool directory it
    /// is replayed, first, when the agent next starts. `rejected/` is held to the spool's own size bound: past it,
    /// its oldest batches are deleted (a daemon that refused everything must not fill the disk).
    public mutating func setAside(stream: UInt64, sequence: UInt64, reason: String) throws(FileIO.Failure) -> String? {
        guard let index = index(stream: stream, sequence: sequence) else { return nil }
        let entry = entries[index]
        let name = Self.fileName(entry.ordinal)
        try FileIO.createDirectory(rejectedDirectory, mode: 0o750)
        let target = "\(rejectedDirectory)/\(name)"
        guard rename(path(entry.ordinal), target) == 0 else {
            throw FileIO.Failure(operation: "rename", path: path(entry.ordinal), errno: errno)
        }
        _ = unindex(at: index)
        // The reason is for the operator: losing it to a full disk must not keep the batch in the queue.
        try? FileIO.writeAtomically(
            "\(rejectedDirectory)/\(name.dropLast(Self.suffix.count)).txt", Array("\(reason)\n".utf8), mode: 0o640)
        trimRejected()
        return target
    }

    /// Deletes the oldest rejected batches (and their reasons) while `rejected/` holds more than the spool's bound.
    private func trimRejected() {
        guard let names = try? FileIO.listDirectory(rejectedDirectory) else { return }
        var batches = names.filter { $0.hasSuffix(Self.suffix) }.sorted()
        var total = batches.reduce(Int64(0)) { $0 + Int64(FileIO.size("\(rejectedDirectory)/\($1)") ?? 0) }
        while total > maximumBytes, batches.count > 1 {
            let oldest = batches.removeFirst()
            total -= Int64(FileIO.size("\(rejectedDirectory)/\(oldest)") ?? 0)
            try? FileIO.remove("\(rejectedDirectory)/\(oldest)")
            try? FileIO.remove("\(rejectedDirectory)/\(oldest.dropLast(Self.suffix.count)).txt")
        }
    }

    /// Whether `name` is the temporary file of a spool file's write (`.NNN.np2.tmp-RANDOM`, or `NNN.np2.tmp-…` as
    /// older agents named it). Only those are deleted at start: the directory may hold files that are not ours.
    static func isInterruptedWrite(_ name: String) -> Bool {
        guard let marker = name.firstRange(of: ".tmp-") else { return false }
        var file = name[..<marker.lowerBound]
        if file.hasPrefix(".") { file = file.dropFirst() }
        return file.hasSuffix(suffix) && UInt64(file.dropLast(suffix.count)) != nil
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
