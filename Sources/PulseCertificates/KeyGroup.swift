import X509

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The group that may read an issued private key (mode 0640): the group of the services of one role.
///
/// One group per role: the daemon's key is readable by the daemon's group (`netpulse-daemon`, which the daemon
/// and the report job run with), an agent's by the agents' group (`netpulse-agents`), so that an agent, or anything
/// else running with the agents' group, can never read the key the daemon proves itself with.
public struct KeyGroup: Sendable, Hashable {
    /// The group's name, for messages.
    public let name: String
    /// Its numeric id.
    public let id: UInt32

    /// The group named `name` on this host.
    /// - Throws: ``CertificateAuthorityError`` when there is no such group.
    public static func named(_ name: String) throws(CertificateAuthorityError) -> KeyGroup {
        guard let entry = getgrnam(name) else { throw .noSuchGroup(name) }
        return KeyGroup(name: name, id: UInt32(entry.pointee.gr_gid))
    }

    /// The group that reads an issuing CA's key: `name`, or else the daemon's group when this host has it (as the
    /// packages and install.sh make it), the way `netpulse-agent request` gives an agent's key to the agents' group.
    /// - Throws: ``CertificateAuthorityError`` when `name` is given and there is no such group.
    public static func daemonGroup(named name: String?) throws(CertificateAuthorityError) -> KeyGroup? {
        if let name { return try named(name) }
        return try? named("netpulse-daemon")
    }

    /// Refuses to give a key of `role` to this group when a key of the other role in `directory` is already
    /// readable by it: the group would then let each role read the other's key.
    ///
    /// A key's role is its certificate's (`NAME.pem` beside `NAME-key.pem`: serverAuth for the daemon, clientAuth
    /// for an agent); keys without a readable Netpulse certificate beside them are not Netpulse's and are left to
    /// the operator. `replacing` (the key about to be written) is not counted.
    func checkExclusive(
        for role: CertificateRole, in directory: String, replacing: String
    ) throws(CertificateAuthorityError) {
        guard let names = Self.listDirectory(directory) else { return }
        for name in names.sorted() where name.hasSuffix("-key.pem") {
            let keyPath = SecureFile.path(name, in: directory)
            guard keyPath != replacing else { continue }
            var info = stat()
            guard lstat(keyPath, &info) == 0, info.st_mode & S_IFMT == S_IFREG, UInt32(info.st_gid) == id,
                info.st_mode & 0o040 != 0
            else { continue }
            let certificatePath = SecureFile.path(String(name.dropLast("-key.pem".count)) + ".pem", in: directory)
            guard let other = Self.role(ofCertificate: certificatePath), other != role else { continue }
            throw .sharedKeyGroup(group: self.name, role: role, otherKey: keyPath, otherRole: other)
        }
    }

    /// The role a certificate file was issued for, or nil when it cannot be read or says neither.
    static func role(ofCertificate path: String) -> CertificateRole? {
        guard case .success(let text) = SecureFile.readText(path),
            let (certificate, _) = try? PEMEncoding.decodeCertificate(text, path: path)
        else { return nil }
        return CertificateRole(of: certificate)
    }

    private static func listDirectory(_ path: String) -> [String]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
