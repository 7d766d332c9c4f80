#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Atomic publication of files that readers pick up while they are being replaced (snapshots, dashboards): each
/// file is written, fsynced and renamed into place, then a `latest` symlink is replaced atomically, so a reader
/// never sees a half-written file or a `latest` naming one. Blocking: call off event loops.
public enum PublishedFiles {
    /// Writes `bytes` to `directory/name` atomically, then points the symlink `directory/latest` at it.
    ///
    /// - Parameters:
    ///   - name: a plain file name (no `/`), relative to `directory`; the symlink holds this relative name, so the
    ///     directory can be moved or served as it is.
    ///   - latest: the symlink's name in `directory`.
    /// - Throws: ``FileIO/Failure`` when a step fails; then `latest` still names the previous file.
    public static func publish(_ bytes: [UInt8], name: String, latest: String, in directory: String) throws(FileIO
        .Failure)
    {
        try FileIO.writeAtomically("\(directory)/\(name)", bytes, mode: 0o644)
        try link(latest, to: name, in: directory)
    }

    /// Replaces the symlink `directory/latest` with one naming `name`, atomically (a new link renamed over the old).
    public static func link(_ latest: String, to name: String, in directory: String) throws(FileIO.Failure) {
        let temporary = "\(directory)/.\(latest).tmp-\(getpid())"
        unlink(temporary)
        guard symlink(name, temporary) == 0 else {
            throw FileIO.Failure(operation: "symlink", path: temporary, errno: errno)
        }
        guard rename(temporary, "\(directory)/\(latest)") == 0 else {
            let error = errno
            unlink(temporary)
            throw FileIO.Failure(operation: "rename", path: "\(directory)/\(latest)", errno: error)
        }
        FileIO.syncDirectory(of: "\(directory)/\(latest)")
    }

    /// The name a symlink holds, or nil when `path` is not a symlink.
    public static func target(of path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4_096)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Deletes the oldest files whose names start with `prefix` and end with `suffix` beyond the newest `keep`
    /// (names must sort by time, as UTC stamps do).
    public static func prune(prefix: String, suffix: String, keep: Int, in directory: String) throws(FileIO.Failure) {
        let names = try FileIO.listDirectory(directory).filter { $0.hasPrefix(prefix) && $0.hasSuffix(suffix) }
            .sorted()
        for name in names.dropLast(max(keep, 0)) { try FileIO.remove("\(directory)/\(name)") }
    }
}
