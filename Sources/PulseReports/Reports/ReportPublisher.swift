import Crypto
import PulseCore
import PulseQuery

#if canImport(Glibc)
    import Glibc
#endif

/// Puts a report's files into the reports directory so that nobody ever sees half of one:
///
///     reports/issues/day-2026-11-22-3f9a1c2b7d4e/   report.html, report.json, *.csv, SHA256SUMS
///     reports/day-2026-11-22 -> issues/day-2026-11-22-3f9a1c2b7d4e
///     reports/day-latest     -> issues/day-2026-11-22-3f9a1c2b7d4e
///     reports/ledger.json
///
/// Each issue is a directory named by the hash of its manifest, written in full (every file fsynced) under a
/// temporary name and renamed into place; the report's name and `KIND-latest` are symbolic links replaced by
/// rename, so a reader following them gets the old complete issue or the new one. The same data gives the same
/// bytes, hence the same issue: making a report again changes nothing. Earlier issues stay, for audit.
public enum ReportPublisher {
    /// What a publication did.
    public struct Published: Sendable, Hashable {
        /// The report's path (the link) and the issue it points at.
        public var path: String
        public var issue: String
        /// False when an identical issue was already there.
        public var isNew: Bool
    }

    /// Writes `report` with `ledger` (already reconciled with it) into `directory`.
    /// - Throws: ``FileIO/Failure`` naming the file.
    public static func publish(_ report: Report, ledger: ReportLedger, in directory: String) throws -> Published {
        let files = ReportFormats.files(report).map { ($0.0, Array($0.1.utf8)) }
        var manifest = ""
        for (name, bytes) in files.sorted(by: { $0.0 < $1.0 }) {
            manifest += "\(hex(SHA256.hash(data: bytes)))  \(name)\n"
        }
        let issueName = "\(report.name)-\(hex(SHA256.hash(data: Array(manifest.utf8))).prefix(12))"
        let issues = "\(directory)/issues"
        try FileIO.createDirectory(issues, mode: FileIO.publishedDirectory)
        let issue = "\(issues)/\(issueName)"
        var isNew = false
        if !FileIO.exists("\(issue)/SHA256SUMS") {
            isNew = true
            // A fresh name nobody can have planted anything at; mkdir fails rather than use what is there.
            let temporary = FileIO.temporaryPath(for: issue)
            guard mkdir(temporary, FileIO.publishedDirectory) == 0 else {
                throw FileIO.Failure(operation: "mkdir", path: temporary, errno: errno)
            }
            try FileIO.setDirectoryMode(temporary, FileIO.publishedDirectory)
            for (name, bytes) in files { try FileIO.writeAtomically("\(temporary)/\(name)", bytes) }
            try FileIO.writeAtomically("\(temporary)/SHA256SUMS", Array(manifest.utf8))
            // A crash may have left an issue without its manifest: it is replaced.
            try removeTree(issue)
            guard rename(temporary, issue) == 0 else {
                throw FileIO.Failure(operation: "rename", path: issue, errno: errno)
            }
            FileIO.syncDirectory(of: issue)
        }
        let path = "\(directory)/\(report.name)"
        try link(path, to: "issues/\(issueName)")
        if report.period.kind != .range {
            // `day-latest` moves forward only: making an old day again does not make it the latest.
            let kind = report.period.kind.rawValue
            let group = report.name.dropFirst("\(kind)-\(report.period.label)".count)
            let latest = "\(directory)/\(kind)-latest\(group)"
            // The link's target without `issues/` and the manifest hash: the name of the report it shows.
            let current = readLink(latest).map { String($0.dropFirst("issues/".count).dropLast(13)) } ?? ""
            if current.isEmpty || current <= report.name {
                try link(latest, to: "issues/\(issueName)")
            }
        }
        try FileIO.writeAtomically("\(directory)/ledger.json", Array(ledger.json.utf8))
        return Published(path: path, issue: issue, isNew: isNew)
    }

    static func hex<D: Sequence>(_ digest: D) -> String where D.Element == UInt8 {
        digest.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// Points `path` at `target` by renaming a new link over it.
    static func link(_ path: String, to target: String) throws(FileIO.Failure) {
        if readLink(path) == target { return }
        try FileIO.replaceSymlink(path, target: target)
    }

    static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4_096)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Removes a directory of plain files (a broken issue), if it is there, without following symbolic links: a
    /// link at `path` is removed itself, and entries are removed relative to the directory opened, so nothing
    /// outside the reports directory is ever deleted through a link.
    static func removeTree(_ path: String) throws(FileIO.Failure) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw FileIO.Failure(operation: "lstat", path: path, errno: errno)
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { return try FileIO.remove(path) }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw FileIO.Failure(operation: "open", path: path, errno: errno) }
        defer { close(fd) }
        for name in try FileIO.listDirectory(path) {
            // Plain files and links only: an issue holds no directories.
            guard unlinkat(fd, name, 0) == 0 || errno == ENOENT else {
                throw FileIO.Failure(operation: "unlink", path: "\(path)/\(name)", errno: errno)
            }
        }
        guard rmdir(path) == 0 || errno == ENOENT else {
            throw FileIO.Failure(operation: "rmdir", path: path, errno: errno)
        }
    }
}
