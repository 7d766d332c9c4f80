#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The few POSIX file operations the CA needs, done so that a crash or a second operator never leaves a
/// half-written or briefly world-readable key behind.
///
/// All calls block on the file system.
enum SecureFile {
    /// PEM files here are a few KiB; the cap stops a wrong path (a log, `/dev/zero`) from being read whole.
    static let maximumReadSize = 1 << 20

    enum ReadFailure: Error {
        case missing
        case unreadable(reason: String)
    }

    /// A file's identity, to tell whether two paths name the same file.
    struct Identity: Hashable {
        let device: UInt64
        let inode: UInt64
    }

    /// Whether anything (a file, directory or dangling symlink) exists at `path`.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// The identity of the file `path` resolves to, or `nil` when there is none.
    static func identity(_ path: String) -> Identity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// The permission bits of `path`, or `nil` when it cannot be examined.
    static func permissions(_ path: String) -> UInt32? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return UInt32(info.st_mode) & 0o7777
    }

    /// Reads a small regular file as text.
    static func readText(_ path: String) -> Result<String, ReadFailure> {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else {
            let error = errno
            if error == ENOENT || error == ENOTDIR {
                return .failure(.missing)
            }
            return .failure(.unreadable(reason: describe(errno: error)))
        }
        defer { close(fd) }

        var info = stat()
        guard fstat(fd, &info) == 0 else {
            return .failure(.unreadable(reason: describe(errno: errno)))
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            return .failure(.unreadable(reason: "it is a directory"))
        }
        if (info.st_mode & S_IFMT) != S_IFREG {
            return .failure(.unreadable(reason: "it is not a regular file"))
        }
        if Int(info.st_size) > maximumReadSize {
            return .failure(
                .unreadable(reason: "it is larger than \(maximumReadSize / 1024) KiB, too large for a PEM file"))
        }

        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(.unreadable(reason: describe(errno: errno)))
            }
            bytes.append(contentsOf: chunk[..<count])
            if bytes.count > maximumReadSize {
                return .failure(.unreadable(reason: "it is too large for a PEM file"))
            }
        }
        return .success(String(decoding: bytes, as: UTF8.self))
    }

    /// The text of `path`, or the error an operator reads: `missing` when there is no such file (by default that it
    /// cannot be read because there is none), otherwise why it cannot be read.
    static func readRequiredText(
        _ path: String, ifMissing missing: CertificateAuthorityError? = nil
    ) throws(CertificateAuthorityError) -> String {
        switch readText(path) {
        case .success(let text): return text
        case .failure(.missing): throw missing ?? .unreadable(path, reason: "there is no such file")
        case .failure(.unreadable(let reason)): throw .unreadable(path, reason: reason)
        }
    }

    /// Creates `path` with `mode` and any missing parents with 0755, like `mkdir -p -m MODE` (the umask still
    /// applies); existing directories are left as they are.
    static func makeDirectory(_ path: String, mode: UInt32) throws(CertificateAuthorityError) {
        let root = path.hasPrefix("/") ? "/" : ""
        let components = path.split(separator: "/")
        for end in components.indices {
            let prefix = root + components[...end].joined(separator: "/")
            let isTarget = end == components.index(before: components.endIndex)
            if mkdir(prefix, mode_t(isTarget ? mode : 0o755)) == 0 { continue }
            let error = errno
            var info = stat()
            if error == EEXIST, stat(prefix, &info) == 0 {
                guard (info.st_mode & S_IFMT) == S_IFDIR else { throw .notADirectory(prefix) }
                continue
            }
            throw .directoryCreationFailed(prefix, reason: describe(errno: error))
        }
    }

    /// A complete, synced temporary file next to its final path, waiting to be given its real name.
    ///
    /// Staging every file first and renaming them last keeps the window in which a crash leaves only some of
    /// them in place down to the time between two renames.
    struct StagedFile {
        let temporaryPath: String
        let path: String

        /// Gives the staged file its real name and syncs the directory so the name survives a crash.
        ///
        /// - Parameter replacing: when `false`, an existing file at `path` is never replaced, not even one that
        ///   another process created a moment ago, and ``CertificateAuthorityError/Code/fileExists`` is thrown.
        func commit(replacing: Bool) throws(CertificateAuthorityError) {
            defer { unlink(temporaryPath) }
            if replacing {
                guard rename(temporaryPath, path) == 0 else { throw .writeFailed(path, reason: describe(errno: errno)) }
            } else if link(temporaryPath, path) != 0 {
                // link() fails with EEXIST rather than replacing, which closes the race between two operators.
                let error = errno
                if error == EEXIST { throw .fileExists(path) }
                // Some file systems (vfat, some FUSE) have no hard links; fall back to a checked rename.
                guard !exists(path) else { throw .fileExists(path) }
                guard rename(temporaryPath, path) == 0 else { throw .writeFailed(path, reason: describe(errno: errno)) }
            }
            syncDirectory(parentDirectory(of: path))
        }

        /// Deletes the temporary file when the operation is abandoned.
        func discard() {
            unlink(temporaryPath)
        }
    }

    /// Writes `contents` to a temporary file beside `path`, created with `mode` from the start (so a key is never
    /// readable by others, not even while being written), and syncs it to disk.
    ///
    /// - Parameter group: the file's group (set before it gets its name); nil: the creator's.
    static func stage(
        _ contents: String, for path: String, mode: UInt32, group: UInt32? = nil
    ) throws(CertificateAuthorityError) -> StagedFile {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let temporaryPath = SecureFile.path(
            "." + name + ".tmp-" + String(UInt64.random(in: .min ... .max), radix: 16),
            in: parentDirectory(of: path)
        )

        let fd = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode_t(mode))
        guard fd >= 0 else { throw .writeFailed(path, reason: describe(errno: errno)) }
        // open() applies the umask; set the exact mode so certificates stay readable by the service user.
        let grouped = group.map { fchown(fd, uid_t.max, gid_t($0)) == 0 } ?? true
        if !grouped || fchmod(fd, mode_t(mode)) != 0 || !writeAll(Array(contents.utf8), to: fd) || fsync(fd) != 0 {
            let error = errno
            close(fd)
            unlink(temporaryPath)
            throw .writeFailed(path, reason: describe(errno: error))
        }
        if close(fd) != 0 {
            let error = errno
            unlink(temporaryPath)
            throw .writeFailed(path, reason: describe(errno: error))
        }
        return StagedFile(temporaryPath: temporaryPath, path: path)
    }

    /// Writes a private key (mode 0600, or 0640 in `keyGroup`) and its certificate (mode 0644) so that a crash or a
    /// failure never leaves either half-written.
    ///
    /// Both are staged completely before either gets its real name, and the key is published first, so a
    /// certificate, once visible, has its key beside it. If publishing the certificate fails, a key that did not
    /// replace anything is removed again.
    static func writeKeyAndCertificate(
        key: String,
        to keyPath: String,
        certificate: String,
        to certificatePath: String,
        replacing: Bool,
        keyGroup: UInt32? = nil
    ) throws(CertificateAuthorityError) {
        let stagedKey = try stage(key, for: keyPath, mode: keyGroup == nil ? 0o600 : 0o640, group: keyGroup)
        let stagedCertificate: StagedFile
        do {
            stagedCertificate = try stage(certificate, for: certificatePath, mode: 0o644)
        } catch {
            stagedKey.discard()
            throw error
        }
        do {
            try stagedKey.commit(replacing: replacing)
        } catch {
            stagedCertificate.discard()
            throw error
        }
        do {
            try stagedCertificate.commit(replacing: replacing)
        } catch {
            if !replacing { unlink(keyPath) }
            throw error
        }
    }

    /// Joins a directory and a file name without doubling or dropping the '/'.
    static func path(_ name: String, in directory: String) -> String {
        var directory = directory.isEmpty ? "." : directory
        while directory.count > 1, directory.hasSuffix("/") { directory.removeLast() }
        return directory == "/" ? "/" + name : directory + "/" + name
    }

    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = String(path[..<slash])
        return parent.isEmpty ? "/" : parent
    }

    static func describe(errno error: Int32) -> String {
        switch error {
        case EACCES, EPERM: return "permission denied"
        case ENOSPC: return "no space left on the device"
        case EROFS: return "the file system is read-only"
        case EDQUOT: return "the disk quota is exhausted"
        default: return String(cString: strerror(error)).lowercased()
        }
    }

    private static func writeAll(_ bytes: [UInt8], to fd: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return write(fd, base + offset, raw.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    /// Makes a rename durable. Failure is ignored: some file systems cannot fsync a directory, and by now the
    /// file is complete and in place either way.
    private static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}
