#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Atomic publication of files that readers pick up while they are being replaced (snapshots, dashboards): each
/// file is written, fsynced and renamed into place, then a `latest` symlink is replaced atomically, so a reader
/// never sees a half-written file or a `latest` naming one. Blocking: call off event loops.
public enum PublishedFiles {
    /// Writes `bytes` to `directory/name` atomically, records the name in `ledger`, then points the symlink
    /// `directory/latest` at it.
    ///
    /// - Parameters:
    ///   - name: a plain file name (no `/`), relative to `directory`; the symlink holds this relative name, so the
    ///     directory can be moved or served as it is.
    ///   - latest: the symlink's name in `directory`.
    ///   - ledger: where the names this program wrote in `directory` are kept, for retention (``prune(keep:in:ledger:where:)``).
    /// - Throws: ``FileIO/Failure`` when a step fails; then `latest` still names the previous file.
    public static func publish(
        _ bytes: [UInt8], name: String, latest: String, in directory: String, ledger: Ledger
    ) throws(FileIO.Failure) {
        try FileIO.writeAtomically("\(directory)/\(name)", bytes, mode: FileIO.publishedFile)
        try ledger.record([name])
        try link(latest, to: name, in: directory)
    }

    /// Replaces the symlink `directory/latest` with one naming `name`, atomically (a new link renamed over the old).
    public static func link(_ latest: String, to name: String, in directory: String) throws(FileIO.Failure) {
        try FileIO.replaceSymlink("\(directory)/\(latest)", target: name)
    }

    /// The name a symlink holds, or nil when `path` is not a symlink.
    public static func target(of path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4_096)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Deletes the oldest of the files `ledger` recorded and `belongs` accepts, beyond the newest `keep` (names
    /// must sort by time, as UTC stamps do). A file this program did not write and record is never deleted, even
    /// when its name looks like one of ours: an output directory may be a shared place.
    public static func prune(
        keep: Int, in directory: String, ledger: Ledger, where belongs: (String) -> Bool
    ) throws(FileIO.Failure) {
        let names = try ledger.names().filter(belongs).sorted()
        let doomed = Array(names.dropLast(max(keep, 0)))
        try remove(doomed, in: directory, ledger: ledger)
    }

    /// Deletes `names` from `directory` and then forgets them in `ledger`; names `ledger` never recorded are left
    /// alone.
    public static func remove(_ names: [String], in directory: String, ledger: Ledger) throws(FileIO.Failure) {
        let recorded = try ledger.names()
        let doomed = names.filter { recorded.contains($0) }
        guard !doomed.isEmpty else { return }
        for name in doomed { try FileIO.remove("\(directory)/\(name)") }
        FileIO.syncDirectory(of: "\(directory)/\(doomed[0])")
        try ledger.forget(doomed)
    }

    /// The names of the files one writer (snapshots, dashboards, alert files) put in one directory, kept in a
    /// hidden file there (`.netpulse-KIND.published`, one name per line), so that retention deletes only what it
    /// wrote. The file is replaced atomically at each change and never followed if it is a symbolic link.
    ///
    /// One writer per ledger: the daemon's services each have their own kind, so two never rewrite one ledger at
    /// once. Files written before the ledger existed are not in it and stay until deleted by hand.
    public struct Ledger: Sendable, Hashable {
        public var directory: String
        public var kind: String

        public init(directory: String, kind: String) {
            self.directory = directory
            self.kind = kind
        }

        /// `directory/.netpulse-KIND.published`.
        public var path: String { "\(directory)/.netpulse-\(kind).published" }

        /// The names recorded (none when the ledger does not exist yet). Names that could leave the directory
        /// (`/`, `.`, `..`) or span lines are ignored: the file's writer never records one.
        public func names() throws(FileIO.Failure) -> Set<String> {
            let bytes: [UInt8]
            do {
                bytes = try FileIO.readBytes(path, followingLinks: false)
            } catch {
                if error.errno == ENOENT { return [] }
                throw error
            }
            var names = Set<String>()
            for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
                let name = String(line)
                if Self.isPlainName(name) { names.insert(name) }
            }
            return names
        }

        /// Adds `names` (plain file names in `directory`).
        public func record(_ names: [String]) throws(FileIO.Failure) {
            let known = try self.names()
            let new = names.filter { Self.isPlainName($0) && !known.contains($0) }
            guard !new.isEmpty else { return }
            try write(known.union(new))
        }

        /// Removes `names`.
        public func forget(_ names: [String]) throws(FileIO.Failure) {
            let known = try self.names()
            let kept = known.subtracting(names)
            guard kept.count != known.count else { return }
            try write(kept)
        }

        private func write(_ names: Set<String>) throws(FileIO.Failure) {
            let text = names.sorted().map { $0 + "\n" }.joined()
            try FileIO.writeAtomically(path, Array(text.utf8), mode: FileIO.publishedFile)
        }

        static func isPlainName(_ name: String) -> Bool {
            !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.contains("\n")
                && !name.contains("\0")
        }
    }
}
