import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The certificates the fleet no longer accepts: what `netpulse ca revoke` writes and the daemon reads (`[tls]
/// revoked`), refusing them at the handshake.
///
/// A text file, one certificate a line: its serial number in hex, then the name it was issued to and when it was
/// revoked (both for people and the daemon's log; only the serial counts). A line whose serial is `*` revokes every
/// certificate issued to the name until the time it gives: the certificates the daemon renewed for an agent, whose
/// serials no file on the CA's host holds, go with the rest (`netpulse ca revoke --name`). Blank lines and lines
/// starting with `#` are skipped.
///
/// ```
/// # netpulse ca revoke: certificates the daemon refuses (serial, name, revoked at)
/// 4f1c2a…e9  web-01  2026-11-29T03:50:00Z
/// *  db-02  2026-11-29T04:10:00Z
/// ```
///
/// Why not an X.509 CRL: the daemon is the only party that checks these certificates, and it reads the list from
/// its own disk, put there by root like `ca.pem` beside it, so the CRL's signature would prove nothing the file's
/// place does not; a list an operator can read, grep and diff is what they need when a host is lost.
public struct RevocationList: Sendable, Hashable {
    /// One revoked certificate.
    public struct Entry: Sendable, Hashable {
        /// The serial number: lowercase hex, no colons, no leading zero bytes (``serialText(_:)``).
        public var serial: String
        /// The name it was issued to (its common name), when known.
        public var name: String?
        /// When it was revoked (RFC 3339), when known.
        public var revokedAt: String?

        public init(serial: String, name: String?, revokedAt: String?) {
            self.serial = serial
            self.name = name
            self.revokedAt = revokedAt
        }

        /// " on 2026-11-29T03:50:00Z", or nothing when the time is not known: after "was revoked" in log lines.
        public var when: String { revokedAt.map { " on \($0)" } ?? "" }

        /// "web-01 (serial 4f1c…, revoked 2026-11-29T03:50:00Z)", for log lines.
        public var description: String {
            if serial == RevocationList.everySerial {
                return "every certificate of \(name ?? "?") issued before \(revokedAt ?? "?")"
            }
            let details = ["serial \(serial)"] + (revokedAt.map { ["revoked \($0)"] } ?? [])
            return (name.map { "\($0) " } ?? "") + "(" + details.joined(separator: ", ") + ")"
        }
    }

    /// The file `netpulse ca revoke` writes in the CA directory unless told otherwise.
    public static let defaultFileName = "revoked.txt"

    static let header = "# netpulse ca revoke: certificates the daemon refuses (serial, name, revoked at)"

    /// The revoked certificates, in the order they were revoked.
    public private(set) var entries: [Entry]
    private var bySerial: [String: Int]
    /// Names whose every certificate issued until a time is revoked: the entry (serial `*`) and that time.
    private var byName: [String: NameRevocation] = [:]

    private struct NameRevocation: Sendable, Hashable {
        var index: Int
        var until: Date
    }

    /// The serial field of an entry that revokes a whole name.
    public static let everySerial = "*"

    /// A list of `entries`; a serial given twice keeps its first entry.
    public init(_ entries: [Entry] = []) {
        self.entries = []
        bySerial = [:]
        for entry in entries { add(entry) }
    }

    /// The entry revoking the certificate with `serial`, if any.
    public func entry(for serial: Certificate.SerialNumber) -> Entry? {
        entry(serial: Self.serialText(serial))
    }

    /// The entry revoking `certificate`: by its serial, or by its name when it was issued before that name was
    /// revoked as a whole.
    public func entry(for certificate: Certificate) -> Entry? {
        if let bySerial = entry(for: certificate.serialNumber) { return bySerial }
        guard !byName.isEmpty, let name = CertificateRole.commonName(of: certificate),
            let revoked = byName[name], Self.issued(certificate) < revoked.until
        else { return nil }
        return entries[revoked.index]
    }

    /// When `certificate` was issued: its start, less the backdating `netpulse ca` gives it (an hour, or a tenth of a
    /// short certificate's lifetime; ``CertificateAuthority/validity(ofLifetime:)``), so that a certificate issued
    /// just after a name was revoked is not taken for one issued before. (For a certificate made elsewhere, without
    /// backdating, this is up to an hour late: one issued in the hour before the revocation may pass.)
    static func issued(_ certificate: Certificate) -> Date {
        let lifetime = certificate.notValidAfter.timeIntervalSince(certificate.notValidBefore)
        let validity = CertificateAuthority.validity(ofLifetime: lifetime)
        return certificate.notValidBefore.addingTimeInterval(lifetime - Double(validity.seconds))
    }

    /// The entry revoking `serial`, written as the list writes serials (``serialText(_:)``), if any.
    func entry(serial: String) -> Entry? {
        bySerial[serial].map { entries[$0] }
    }

    /// Adds `entry`; false when its serial is already revoked (the list is left as it was).
    @discardableResult
    public mutating func add(_ entry: Entry) -> Bool {
        if entry.serial == Self.everySerial {
            guard let name = entry.name, let until = entry.revokedAt.flatMap(Self.parseTime) else { return false }
            if let existing = byName[name], existing.until >= until { return false }
            byName[name] = NameRevocation(index: entries.count, until: until)
            entries.append(entry)
            return true
        }
        guard bySerial[entry.serial] == nil else { return false }
        bySerial[entry.serial] = entries.count
        entries.append(entry)
        return true
    }

    /// An RFC 3339 time as the list writes it (`2026-11-29T03:50:00Z`).
    static func parseTime(_ text: String) -> Date? {
        try? Date(text, strategy: Date.ISO8601FormatStyle())
    }

    /// The file's text.
    public var text: String {
        ([Self.header]
            + entries.map { entry in
                ([entry.serial] + [entry.name, entry.revokedAt].compactMap { $0 }).joined(separator: "  ")
            }).joined(separator: "\n") + "\n"
    }

    /// A serial number as the list writes it: lowercase hex without colons or leading zero bytes (DER adds one to
    /// keep a serial positive; `openssl x509 -serial` leaves it out).
    public static func serialText(_ serial: Certificate.SerialNumber) -> String {
        hex(Array(serial.bytes.drop { $0 == 0 }))
    }

    /// `text` (hex, upper or lower case, colons allowed, as `openssl x509 -serial` or this list prints it) as the
    /// list writes serials; nil when it is not hex.
    public static func normalisedSerial(_ text: String) -> String? {
        let digits = text.filter { $0 != ":" }.lowercased()
        guard !digits.isEmpty, digits.count <= 2 * 20, digits.allSatisfy(\.isHexDigit) else { return nil }
        let even = digits.count % 2 == 1 ? "0" + digits : digits
        var bytes = [UInt8]()
        var index = even.startIndex
        while index < even.endIndex {
            let next = even.index(index, offsetBy: 2)
            bytes.append(UInt8(even[index..<next], radix: 16)!)
            index = next
        }
        let trimmed = Array(bytes.drop { $0 == 0 })
        return trimmed.isEmpty ? nil : hex(trimmed)
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in (byte < 0x10 ? "0" : "") + String(byte, radix: 16) }.joined()
    }

    // MARK: Revoking

    /// What `netpulse ca revoke` was asked to revoke.
    public enum Target: Sendable {
        /// A certificate issued into `directory` as `NAME.pem`, or else a serial number.
        case nameOrSerial(String, directory: String)
        /// The certificate in a PEM file.
        case certificate(path: String)
        /// Every certificate issued to the name until now, those the daemon renewed included.
        case everyCertificate(name: String)
    }

    /// Adds `target` to the list at `path` (made when missing), revoked at `now`; returns its entry and whether it
    /// was new (false: it was revoked already, and the file is left as it was).
    /// - Throws: ``CertificateAuthorityError`` when the target names nothing, or a file cannot be read or written.
    public static func revoke(
        _ target: Target, in path: String, now: Date = Date()
    ) throws(CertificateAuthorityError) -> (entry: Entry, added: Bool) {
        var list = SecureFile.exists(path) ? try load(path: path) : RevocationList()
        let certificatePath: String?
        var serial: String?
        switch target {
        case .everyCertificate(let name):
            try NameRules.validateCertificateName(name)
            let entry = Entry(serial: everySerial, name: name, revokedAt: DateText.format(now))
            guard list.add(entry) else { return (entry, false) }
            try list.write(to: path)
            return (entry, true)
        case .certificate(let file): certificatePath = file
        case .nameOrSerial(let value, let directory):
            let issued = SecureFile.path(value + ".pem", in: directory)
            if (try? NameRules.validateCertificateName(value)) != nil, SecureFile.exists(issued) {
                certificatePath = issued
            } else if let normalised = normalisedSerial(value) {
                certificatePath = nil
                serial = normalised
            } else {
                throw .unknownCertificate(value, directory: directory)
            }
        }
        var name: String?
        if let certificatePath {
            let text = try SecureFile.readRequiredText(certificatePath)
            // An agent's renewed current.pem holds its key before its chain.
            let certificate = try PEMEncoding.decodeChain(text, path: certificatePath, skippingKeys: true)
                .certificates[0]
            serial = serialText(certificate.serialNumber)
            // One field of the line: a name with spaces (not one `netpulse ca` issues) keeps them as underscores.
            name = CertificateRole.commonName(of: certificate).map {
                $0.split(whereSeparator: \.isWhitespace).joined(separator: "_")
            }
        }
        let entry = Entry(serial: serial ?? "", name: name, revokedAt: DateText.format(now))
        if let existing = list.entry(serial: entry.serial) { return (existing, false) }
        list.add(entry)
        try list.write(to: path)
        return (entry, true)
    }

    // MARK: Reading and writing

    /// Reads the list at `path`.
    /// - Throws: ``CertificateAuthorityError`` naming the file and, for a line that is not an entry, its number.
    public static func load(path: String) throws(CertificateAuthorityError) -> RevocationList {
        try parse(try SecureFile.readRequiredText(path, ifMissing: .missingRevocationList(path)), path: path)
    }

    /// The list `text` holds (read from `path`, for errors).
    public static func parse(_ text: String, path: String) throws(CertificateAuthorityError) -> RevocationList {
        var list = RevocationList()
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            guard let first = fields.first, !first.hasPrefix("#") else { continue }
            if first == everySerial {
                guard fields.count > 2, parseTime(String(fields[2])) != nil else {
                    throw .invalidRevocationList(
                        path, line: index + 1,
                        reason: "a '*' line names the agent, then the time (RFC 3339) it was revoked")
                }
                list.add(Entry(serial: everySerial, name: String(fields[1]), revokedAt: String(fields[2])))
                continue
            }
            guard let serial = normalisedSerial(String(first)) else {
                throw .invalidRevocationList(
                    path, line: index + 1, reason: "\"\(first.prefix(60))\" is not a serial number in hex")
            }
            list.add(
                Entry(
                    serial: serial, name: fields.count > 1 ? String(fields[1]) : nil,
                    revokedAt: fields.count > 2 ? String(fields[2]) : nil))
        }
        return list
    }

    /// Writes the list to `path` (mode 0644), replacing what was there in one step: a reader sees the old list or
    /// the new one, never part of either.
    public func write(to path: String) throws(CertificateAuthorityError) {
        let staged = try SecureFile.stage(text, for: path, mode: 0o644)
        do {
            try staged.commit(replacing: true)
        } catch {
            staged.discard()
            throw error
        }
    }
}
