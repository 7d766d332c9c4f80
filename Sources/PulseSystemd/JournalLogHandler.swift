import CSystemd
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A swift-log handler that writes structured entries to the systemd journal (`sd_journal_sendv(3)`): the
/// message, its priority, the code location, the identifier, and every metadata value as a field of its own
/// (`agent` becomes `AGENT_ID`, `peer` becomes `PEER`, other keys are upper-cased), so
/// `journalctl AGENT_ID=web-01` finds one agent's lines.
public struct JournalLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let identifier: String

    /// - Parameter identifier: `SYSLOG_IDENTIFIER`, the program name `journalctl -t` selects by.
    public init(identifier: String, metadataProvider: Logger.MetadataProvider? = nil) {
        self.identifier = identifier
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields = [
            "MESSAGE=\(event.message)",
            "PRIORITY=\(Self.priority(event.level))",
            "SYSLOG_IDENTIFIER=\(identifier)",
            "CODE_FILE=\(event.file)",
            "CODE_LINE=\(event.line)",
            "CODE_FUNC=\(event.function)",
        ]
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let own = event.metadata { merged.merge(own) { $1 } }
        if let error = event.error { merged["error"] = "\(error)" }
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            fields.append("\(Self.fieldName(key))=\(value)")
        }
        Self.send(fields)
    }

    /// Journal field names: upper-case letters, digits and underscores, not starting with an underscore (those
    /// are reserved for trusted fields).
    static func fieldName(_ key: String) -> String {
        switch key {
        case "agent": return "AGENT_ID"
        case "peer": return "PEER"
        default:
            var name = String(key.uppercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
            while name.hasPrefix("_") { name.removeFirst() }
            return name.isEmpty ? "FIELD" : name
        }
    }

    /// syslog priorities, as the journal uses them.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    static func send(_ fields: [String]) {
        // One buffer holds every field; the iovecs point into it, all within one closure where it is pinned.
        // Values may hold any bytes, newlines included; the journal keeps each field whole.
        var bytes = [UInt8]()
        var ranges = [Range<Int>]()
        for field in fields {
            let start = bytes.count
            bytes.append(contentsOf: field.utf8)
            ranges.append(start..<bytes.count)
        }
        bytes.withUnsafeMutableBytes { buffer in
            let vectors = ranges.map { iovec(iov_base: buffer.baseAddress! + $0.lowerBound, iov_len: $0.count) }
            _ = sd_journal_sendv(vectors, Int32(vectors.count))
        }
    }

    /// True when standard error is the journal: systemd sets `JOURNAL_STREAM=device:inode` for the stream it
    /// connects, and a program should switch to native journal logging only if fd 2 is still that stream.
    public static var standardErrorIsJournal: Bool {
        guard let value = Environment.value("JOURNAL_STREAM") else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(2, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}

extension JournalLogHandler {
    /// Sets up swift-log for a program: structured entries to the journal when running under systemd (standard
    /// error is the journal), plain lines on standard error otherwise (a terminal, a pipe, a test).
    public static func bootstrapLogging(identifier: String, level: Logger.Level) {
        let toJournal = standardErrorIsJournal
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler =
                toJournal ? JournalLogHandler(identifier: identifier) : StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
