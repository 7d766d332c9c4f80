import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Small POSIX file helpers (no Foundation, so the agent stays light). Blocking: call them off event loops.
public enum FileIO {
    private static let temporaryCounter = Atomic<UInt64>(0)

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

    public static func readBytes(_ path: String, limit: Int = 64 << 20) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
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
    public static func writeAtomically(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o644) throws(Failure) {
        // Unique per write, so two writes of one file at once (from two threads) never share a temporary file.
        let temporary = "\(path).tmp-\(getpid())-\(temporaryCounter.add(1, ordering: .relaxed).newValue)"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Failure(operation: "create", path: temporary, errno: errno) }
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
    public static func createDirectory(_ path: String, mode: mode_t = 0o755) throws(Failure) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, mode) != 0 && errno != EEXIST {
                throw Failure(operation: "mkdir", path: prefix, errno: errno)
            }
        }
    }

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
