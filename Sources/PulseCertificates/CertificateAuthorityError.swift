/// An error an operator can meet while creating, loading or using the fleet CA.
///
/// Every message says what was wrong, where (the path or the rejected value) and what to do, so the CLI can
/// print `description` as it is. Match on ``code`` rather than on the text.
public struct CertificateAuthorityError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: String, Sendable, Hashable {
        /// `create` found `ca.pem` or `ca-key.pem` already in the directory.
        case caAlreadyExists
        /// A file that must exist does not.
        case missingFile
        /// A file exists but could not be read (permissions, a directory, too large).
        case unreadableFile
        /// A file does not hold the PEM document that was expected.
        case invalidPEM
        /// The CA certificate does not say `CA:TRUE`.
        case notCertificateAuthority
        /// The CA private key does not belong to the CA certificate.
        case keyMismatch
        /// The CA has expired.
        case caExpired
        /// A certificate or CA name was rejected.
        case invalidName
        /// An IP address string was rejected.
        case invalidIPAddress
        /// A validity period was out of range or would outlive the CA.
        case invalidValidity
        /// Extra DNS names or IP addresses were given for an agent certificate.
        case extraNamesForAgent
        /// An output file exists and overwriting was not allowed.
        case fileExists
        /// An output file would replace one of the CA's own files.
        case wouldOverwriteCA
        /// A path that must be a directory is something else.
        case notADirectory
        /// A directory could not be created.
        case directoryCreationFailed
        /// A file could not be written, synced or renamed into place.
        case writeFailed
        /// swift-certificates could not build or sign a certificate.
        case signingFailed
        /// The group named to read a key does not exist.
        case noSuchGroup
        /// The group named to read a key already reads a key of the other role.
        case sharedKeyGroup
        /// A revocation list has a line that is not an entry.
        case invalidRevocationList
        /// What `netpulse ca revoke` was given is neither a certificate issued here nor a serial number.
        case unknownCertificate
        /// A certificate request cannot be signed: not a request, a bad signature, another name.
        case invalidRequest
        /// An issuing CA for agents was asked for a daemon's or an operator's certificate.
        case roleNotIssued
    }

    /// What kind of failure this is.
    public let code: Code
    /// The file or directory concerned, when there is one.
    public let path: String?
    /// The full operator-facing message.
    public let message: String

    public var description: String { message }

    init(_ code: Code, path: String? = nil, _ message: String) {
        self.code = code
        self.path = path
        self.message = message
    }
}

// All operator-facing wording lives here, so it can be read and reviewed in one place.
extension CertificateAuthorityError {
    static func caAlreadyExists(directory: String, existing: String) -> Self {
        Self(
            .caAlreadyExists,
            path: existing,
            """
            A CA already exists in \(directory) (found \(existing)). Refusing to overwrite it: every certificate \
            it issued would stop being trusted. Keep using it, or make a new CA in another directory \
            (or move the old files away first).
            """
        )
    }

    static func directoryHoldsCA(_ existing: String, advice: String) -> Self {
        Self(.caAlreadyExists, path: existing, "\(existing) exists: a CA is there already. \(advice).")
    }

    static func missingCACertificate(_ path: String) -> Self {
        Self(
            .missingFile,
            path: path,
            """
            No CA certificate at \(path). Run `netpulse ca init` to create a CA, or point to the directory \
            that holds ca.pem and ca-key.pem.
            """
        )
    }

    static func missingCAKey(_ path: String) -> Self {
        Self(
            .missingFile,
            path: path,
            """
            No CA private key at \(path) (the CA certificate is there, its key is not). Restore ca-key.pem \
            from the backup made with ca.pem; without it no certificates can be issued for this CA.
            """
        )
    }

    static func unreadable(_ path: String, reason: String) -> Self {
        Self(
            .unreadableFile,
            path: path,
            "Cannot read \(path): \(reason). Check the path and that this user may read it."
        )
    }

    static func invalidCertificatePEM(_ path: String, reason: String) -> Self {
        Self(
            .invalidPEM,
            path: path,
            """
            \(path) does not hold a usable certificate: \(reason). Expected exactly one \
            '-----BEGIN CERTIFICATE-----' block, as written by `netpulse ca init`.
            """
        )
    }

    static func invalidKeyPEM(_ path: String, reason: String) -> Self {
        Self(
            .invalidPEM,
            path: path,
            """
            \(path) does not hold a usable private key: \(reason). Expected one unencrypted \
            '-----BEGIN PRIVATE KEY-----' (PKCS#8) or '-----BEGIN EC PRIVATE KEY-----' block.
            """
        )
    }

    static func notCertificateAuthority(_ path: String, reason: String) -> Self {
        Self(
            .notCertificateAuthority,
            path: path,
            """
            \(path) is not a CA certificate (\(reason)), so it cannot issue certificates. Point to the \
            fleet CA's directory, or create one with `netpulse ca init`.
            """
        )
    }

    static func keyMismatch(certificate: String, key: String) -> Self {
        Self(
            .keyMismatch,
            path: key,
            """
            \(key) is not the private key of \(certificate): their public keys differ. Put back the ca-key.pem \
            that was created with this ca.pem (restore both from the same backup).
            """
        )
    }

    static func caExpired(_ path: String, notValidAfter: String) -> Self {
        Self(
            .caExpired,
            path: path,
            """
            The CA certificate \(path) expired on \(notValidAfter); nothing it signs would be trusted. \
            Create a new CA in another directory with `netpulse ca init` and reissue the fleet's certificates.
            """
        )
    }

    static func invalidName(_ name: String, reason: String) -> Self {
        Self(
            .invalidName,
            """
            Invalid name \(quoted(name)): \(reason). A name is 1-\(NameRules.maximumNameLength) characters: \
            letters, digits, '-' and '.', in dot-separated labels that start and end with a letter or digit \
            (for example web-01 or collector.example.com).
            """
        )
    }

    static func invalidDNSName(_ name: String, reason: String) -> Self {
        Self(
            .invalidName,
            """
            Invalid DNS name \(quoted(name)): \(reason). A DNS name is at most \
            \(NameRules.maximumDNSNameLength) characters: letters, digits, '-' and '.', in dot-separated labels \
            of 1-63 characters that start and end with a letter or digit. Wildcards are not supported.
            """
        )
    }

    static func invalidCommonName(_ name: String, reason: String) -> Self {
        Self(
            .invalidName,
            """
            Invalid CA name \(quoted(name)): \(reason). Use 1-\(NameRules.maximumNameLength) printable \
            characters, for example "Netpulse Fleet CA".
            """
        )
    }

    static func invalidIPAddress(_ value: String) -> Self {
        Self(
            .invalidIPAddress,
            """
            Invalid IP address \(quoted(value)): expected an IPv4 address such as 127.0.0.1 or an IPv6 address \
            such as ::1, without a port, prefix length or zone (%eth0).
            """
        )
    }

    static func invalidValidity(_ validity: Validity, maximumDays: Int) -> Self {
        Self(
            .invalidValidity,
            "Invalid validity of \(validity): choose between 1 minute and \(maximumDays) days."
        )
    }

    static func invalidValidityText(_ text: String) -> Self {
        Self(
            .invalidValidity,
            "--validity \(text.debugDescription) is not a duration in whole seconds: 90d, 12h, 3m, 45s"
        )
    }

    static let validityTwice = Self(.invalidValidity, "give --days or --validity, not both")

    static func outlivesCA(_ validity: Validity, expiry: String, caExpiry: String, maximumDays: Int) -> Self {
        let advice =
            maximumDays >= 1
            ? "Choose at most \(maximumDays) days, or create a new CA and reissue the fleet's certificates."
            : "Create a new CA and reissue the fleet's certificates."
        return Self(
            .invalidValidity,
            """
            A certificate valid for \(validity) would expire on \(expiry), after the CA that signs it \
            (\(caExpiry)); peers would stop trusting it early. \(advice)
            """
        )
    }

    static func roleNotIssued(_ role: CertificateRole, by path: String) -> Self {
        Self(
            .roleNotIssued,
            path: path,
            """
            The CA \(path) issues agent certificates only (an issuing CA: its extended key usage is clientAuth), \
            not \(role == .daemon ? "the daemon's" : "operators'"). Issue it with the fleet's root CA (--dir \
            /etc/netpulse/ca).
            """
        )
    }

    static func noRoomForIssuingCA(_ path: String, pathLength: Int) -> Self {
        Self(
            .notCertificateAuthority,
            path: path,
            """
            The CA \(path) is an issuing CA itself (path length \(pathLength)): an issuing CA for agents goes \
            under the root (--dir /etc/netpulse/ca).
            """
        )
    }

    static var extraNamesForAgent: Self {
        Self(
            .extraNamesForAgent,
            """
            Agent and operator certificates carry only their own name; extra DNS names and IP addresses apply to \
            daemon certificates. Issue the certificate without them.
            """
        )
    }

    static func fileExists(_ path: String) -> Self {
        Self(
            .fileExists,
            path: path,
            """
            \(path) already exists. Refusing to overwrite it; allow overwriting (--overwrite) to replace it \
            (the old certificate stays valid until it expires), or choose another name or output directory.
            """
        )
    }

    static func wouldOverwriteCA(_ path: String) -> Self {
        Self(
            .wouldOverwriteCA,
            path: path,
            "\(path) is one of the CA's own files; refusing to replace it. Choose another name or output directory."
        )
    }

    static func notADirectory(_ path: String) -> Self {
        Self(
            .notADirectory,
            path: path,
            "\(path) exists but is not a directory. Choose a directory, or move that file away."
        )
    }

    static func directoryCreationFailed(_ path: String, reason: String) -> Self {
        Self(
            .directoryCreationFailed,
            path: path,
            "Cannot create directory \(path): \(reason). Check the path and that this user may write to its parent."
        )
    }

    static func writeFailed(_ path: String, reason: String) -> Self {
        Self(
            .writeFailed,
            path: path,
            """
            Cannot write \(path): \(reason). Check free space and that this user may write to the directory; \
            no partial file was left behind.
            """
        )
    }

    static func signingFailed(_ what: String, underlying: any Error) -> Self {
        Self(
            .signingFailed,
            "Could not build the \(what): \(underlying). This is a bug in Netpulse; please report it."
        )
    }

    static func noSuchGroup(_ name: String) -> Self {
        Self(
            .noSuchGroup,
            """
            There is no group \(quoted(name)) on this host. scripts/install.sh makes netpulse-daemon (the daemon's \
            key) and netpulse-agents (agents' keys); or create one: groupadd --system \(name).
            """
        )
    }

    static func sharedKeyGroup(
        group: String, role: CertificateRole, otherKey: String, otherRole: CertificateRole
    ) -> Self {
        let roles =
            switch (role, otherRole) {
            case (.daemon, .agent): "the daemon's key would be readable by agents"
            case (.agent, .daemon): "agents could read the daemon's key"
            default: "one role could act as the other"
            }
        return Self(
            .sharedKeyGroup,
            path: otherKey,
            """
            Group \(group) already reads the \(otherRole.rawValue) key \(otherKey); giving it this \(role.rawValue) \
            key too means \(roles). Give each role a group of its own: --group netpulse-daemon for the daemon, \
            --group netpulse-agents for agents (scripts/install.sh makes both and runs each service with its own).
            """
        )
    }

    static func missingRevocationList(_ path: String) -> Self {
        Self(
            .missingFile,
            path: path,
            """
            There is no revocation list at \(path). `netpulse ca revoke` writes it in the CA directory; copy it \
            here, or remove [tls] revoked from the daemon's config if no certificate is revoked.
            """
        )
    }

    static func invalidRevocationList(_ path: String, line: Int, reason: String) -> Self {
        Self(
            .invalidRevocationList,
            path: path,
            """
            \(path):\(line): \(reason). Each line is a serial number in hex, then the name and the time \
            (as `netpulse ca revoke` writes them); lines starting with # are comments.
            """
        )
    }

    static func invalidRequest(_ path: String, reason: String) -> Self {
        Self(
            .invalidRequest,
            path: path,
            """
            Not signing \(path): \(reason). Make the request again on the agent's host (netpulse-agent request) \
            and bring that file here.
            """
        )
    }

    static func unknownCertificate(_ value: String, directory: String) -> Self {
        Self(
            .unknownCertificate,
            path: directory,
            """
            \(quoted(value)) is neither a certificate in \(directory) (no \(value).pem there) nor a serial number \
            in hex. Give the name a certificate was issued to (with --dir where it was written), its serial \
            (openssl x509 -noout -serial -in NAME.pem), or --certificate FILE.
            """
        )
    }

    /// Quotes and escapes a rejected value so control characters and newlines cannot garble the message.
    private static func quoted(_ value: String) -> String {
        value.debugDescription
    }
}
