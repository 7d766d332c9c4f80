#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Small POSIX file helpers (no Foundation, so the agent stays light). Blocking: call them off event loops.
public enum FileIO {
    /// An errno with the operation and path it belongs to.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var operation: String
        public var path: String
        public var errno: Int32

        public init(operation: String, path: String, errno: Int32) {
            self.operation = operation
            self.path = path
            self.errno = errno
        }

        public var description: String { "\(operation) \(path): \(String(cString: strerror(errno)))" }
    }

    /// Reads a whole file (at most `limit` bytes).
    ///
    /// - Parameter followingLinks: false refuses a symbolic link at `path` (`ELOOP`), for files in directories that
    ///   others may write.
    public static func readBytes(
        _ path: String, limit: Int = 64 << 20, followingLinks: Bool = true
    ) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | (followingLinks ? 0 : O_NOFOLLOW))
        guard fd >= 0 else { throw Failure(operation: "open", path: path, errno: errno) }
        defer { close(fd) }
        var result = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(operation: "read", path: path, errno: errno)
            }
            if count == 0 { return result }
            result.append(contentsOf: chunk[0..<count])
            guard result.count <= limit else {
                throw Failure(operation: "read (file too large)", path: path, errno: EFBIG)
            }
        }
    }

    public static func readString(_ path: String) throws(Failure) -> String {
        String(decoding: try readBytes(path), as: UTF8.self)
    }

    /// Writes a file so that readers and crashes see either the old content or the new, never a mix: a temporary
    /// file in the same directory created with `mode`, fsync, rename, fsync of the directory.
    ///
    /// The temporary file has a name nobody can guess (``temporaryPath(for:)``) and is created exclusively without
    /// following symbolic links, so another user who may write the directory cannot make the write land in a file
    /// of their choosing (a symlink planted at the name fails the create; it never truncates what it points at).
    ///
    /// The file gets exactly `mode`, whatever the umask: the units run under `UMask=0077`, and what is published for
    /// a group to read (``publishedFile``) must not lose the group's bit on the way.
    public static func writeAtomically(_ path: String, _ bytes: [UInt8], mode: mode_t = publishedFile) throws(Failure) {
        var attempts = 0
        while true {
            do {
                return try writeAtomically(path, bytes, mode: mode, temporary: temporaryPath(for: path))
            } catch {
                // Something was at the name already (a leftover of a crash, or someone else's): draw again.
                guard error.errno == EEXIST && attempts < 3 else { throw error }
                attempts += 1
            }
        }
    }

    /// ``writeAtomically(_:_:mode:)`` through the temporary file `temporary`, which must not exist: anything at
    /// that name (a file, a symbolic link) fails the write with `EEXIST` and is left as it is.
    static func writeAtomically(_ path: String, _ bytes: [UInt8], mode: mode_t, temporary: String) throws(Failure) {
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Failure(operation: "create", path: temporary, errno: errno) }
        guard fchmod(fd, mode) == 0 else {
            let error = errno
            close(fd)
            unlink(temporary)
            throw Failure(operation: "chmod", path: temporary, errno: error)
        }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if count < 0 {
                if errno == EINTR { continue }
                let error = errno
                close(fd)
                unlink(temporary)
                throw Failure(operation: "write", path: temporary, errno: error)
            }
            written += count
        }
        if fsync(fd) != 0 {
            let error = errno
            close(fd)
            unlink(temporary)
            throw Failure(operation: "fsync", path: temporary, errno: error)
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let error = errno
            unlink(temporary)
            throw Failure(operation: "rename", path: path, errno: error)
        }
        syncDirectory(of: path)
    }

    /// A fresh name beside `path` for a file that becomes `path` by rename: hidden (`.NAME.tmp-` and 128 random
    /// bits from the kernel's generator), so no one can plant something at it in advance, and two writes of one
    /// file at once (from two threads or processes) never share it.
    public static func temporaryPath(for path: String) -> String {
        let directory = parentDirectory(path)
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        var random = SystemRandomNumberGenerator()
        let bits = (random.next() as UInt64, random.next() as UInt64)
        let suffix = hex(bits.0) + hex(bits.1)
        return (directory == "/" ? "/" : directory + "/") + ".\(name).tmp-\(suffix)"
    }

    private static func hex(_ value: UInt64) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }

    /// Points the symbolic link `path` at `target`, atomically: a new link under a fresh name
    /// (``temporaryPath(for:)``) renamed over the old one. `symlink` never follows anything at its name, and rename
    /// replaces a link rather than what it points at.
    public static func replaceSymlink(_ path: String, target: String) throws(Failure) {
        var attempts = 0
        while true {
            let temporary = temporaryPath(for: path)
            guard symlink(target, temporary) == 0 else {
                if errno == EEXIST && attempts < 3 {
                    attempts += 1
                    continue
                }
                throw Failure(operation: "symlink", path: temporary, errno: errno)
            }
            guard rename(temporary, path) == 0 else {
                let error = errno
                unlink(temporary)
                throw Failure(operation: "rename", path: path, errno: error)
            }
            syncDirectory(of: path)
            return
        }
    }

    /// Makes a rename or unlink in the directory durable.
    public static func syncDirectory(of path: String) {
        let directory = parentDirectory(path)
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }

    public static func parentDirectory(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `mkdir -p` with `mode` for the directories it creates.
    /// Makes `path` and any missing parents; those it makes get exactly `mode`, whatever the umask (directories
    /// that were there keep theirs).
    public static func createDirectory(_ path: String, mode: mode_t = publishedDirectory) throws(Failure) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, mode) == 0 {
                try setDirectoryMode(prefix, mode)
            } else if errno != EEXIST {
                throw Failure(operation: "mkdir", path: prefix, errno: errno)
            }
        }
    }

    /// Gives a directory just made exactly the permissions `mode`, whatever the umask.
    ///
    /// When the umask left them as they are, nothing is changed, so a set-group-ID bit the directory inherited from
    /// its parent stays (the report job runs under `UMask=0027` in the 2750 directory of the group netpulse, and
    /// its files keep taking that group). Otherwise `chmod` clears that bit: the units forbid setting it
    /// (`RestrictSUIDSGID=yes`), and the daemon, whose umask is 0077, has the group netpulse as its own.
    public static func setDirectoryMode(_ path: String, _ mode: mode_t) throws(Failure) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw Failure(operation: "stat", path: path, errno: errno) }
        guard info.st_mode & 0o777 != mode else { return }
        guard chmod(path, mode) == 0 else { throw Failure(operation: "chmod", path: path, errno: errno) }
    }

    /// What the daemon and the reports publish for people (dashboards, snapshots, alert charts and events,
    /// reports) is readable by the owner's group and no one else (`docs/operations.md`, "Who reads what"): files
    /// 0640 and directories 0750. The units run the daemon with the readers' group, `netpulse`.
    public static let publishedFile: mode_t = 0o640
    public static let publishedDirectory: mode_t = 0o750

    /// Names of the entries of a directory (without `.` and `..`).
    public static func listDirectory(_ path: String) throws(Failure) -> [String] {
        guard let directory = opendir(path) else { throw Failure(operation: "opendir", path: path, errno: errno) }
        defer { closedir(directory) }
        var names = [String]()
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    public static func remove(_ path: String) throws(Failure) {
        guard unlink(path) == 0 || errno == ENOENT else { throw Failure(operation: "unlink", path: path, errno: errno) }
    }

    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// File size in bytes, or `nil` when it does not exist.
    public static func size(_ path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }
}
