import Foundation
import Testing

@testable import PulseCore

/// Files written into directories that other users may write (an output directory an operator shares, a reports
/// directory its readers could once write): nothing planted there makes a write land elsewhere, and retention
/// deletes only what Netpulse wrote.
@Suite struct FileSafetyTests {
    /// A directory for the files, and beside it a victim outside it (as the daemon's store would be).
    func setUp() throws -> (directory: String, victim: String) {
        let root = NSTemporaryDirectory() + "netpulse-filesafety-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root + "/shared", withIntermediateDirectories: true)
        try "precious\n".write(toFile: root + "/victim.db", atomically: false, encoding: .utf8)
        return (root + "/shared", root + "/victim.db")
    }

    func text(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    /// Symbolic links planted at every temporary name the old scheme could pick (`NAME.tmp-PID-N` for the first
    /// 5,000 writes of this process), all pointing at the victim: the write goes to the file it names, the victim
    /// keeps its bytes and the links stay links.
    @Test func symlinksAtPredictableTemporaryNamesAreNeverFollowed() throws {
        let (directory, victim) = try setUp()
        let target = directory + "/ledger.json"
        for counter in 1...5_000 {
            #expect(symlink(victim, "\(target).tmp-\(getpid())-\(counter)") == 0)
        }
        #expect(symlink(victim, "\(directory)/.ledger.json.tmp-\(getpid())") == 0)
        for round in 0..<3 {
            try FileIO.writeAtomically(target, Array("round \(round)\n".utf8))
        }
        #expect(text(victim) == "precious\n")
        #expect(text(target) == "round 2\n")
        var info = stat()
        #expect(lstat("\(target).tmp-\(getpid())-1", &info) == 0 && info.st_mode & S_IFMT == S_IFLNK)
        // Only the links and the file: no temporary file left behind.
        let names = try FileIO.listDirectory(directory)
        #expect(names.count == 5_002 && names.contains("ledger.json"))
    }

    /// Even a symbolic link at the exact temporary name (a guess that came true, or a race) is not followed: the
    /// exclusive create fails with EEXIST, the victim and the target are untouched; the public write, which
    /// draws a new name, succeeds.
    @Test func aSymlinkAtTheExactTemporaryNameFailsTheCreateAndTouchesNothing() throws {
        let (directory, victim) = try setUp()
        let target = directory + "/snapshot.json"
        try FileIO.writeAtomically(target, Array("old\n".utf8))
        let temporary = FileIO.temporaryPath(for: target)
        #expect(symlink(victim, temporary) == 0)
        #expect {
            try FileIO.writeAtomically(target, Array("new\n".utf8), mode: 0o644, temporary: temporary)
        } throws: { error in
            (error as? FileIO.Failure)?.errno == EEXIST
        }
        #expect(text(victim) == "precious\n")
        #expect(text(target) == "old\n")
        #expect(PublishedFiles.target(of: temporary) == victim)
        // A dangling link, to a file that does not exist yet: not created through it either.
        let dangling = FileIO.temporaryPath(for: target)
        #expect(symlink(directory + "/../created-through-a-link", dangling) == 0)
        #expect(throws: FileIO.Failure.self) {
            try FileIO.writeAtomically(target, Array("new\n".utf8), mode: 0o644, temporary: dangling)
        }
        #expect(!FileIO.exists(FileIO.parentDirectory(directory) + "/created-through-a-link"))

        try FileIO.writeAtomically(target, Array("new\n".utf8))
        #expect(text(target) == "new\n")
        #expect(text(victim) == "precious\n")
    }

    /// Temporary names are hidden, beside the target, and carry 128 random bits: never the same twice, nothing a
    /// process id or a counter predicts.
    @Test func temporaryNamesAreUnpredictable() throws {
        let target = "/var/lib/netpulse-reports/ledger.json"
        var seen = Set<String>()
        for _ in 0..<1_000 {
            let name = FileIO.temporaryPath(for: target)
            #expect(name.hasPrefix("/var/lib/netpulse-reports/.ledger.json.tmp-"))
            let random = name.dropFirst("/var/lib/netpulse-reports/.ledger.json.tmp-".count)
            #expect(random.count == 32 && random.allSatisfy(\.isHexDigit))
            seen.insert(name)
        }
        #expect(seen.count == 1_000)
        // Two writes of one file at once never share a temporary file (each creates its own exclusively).
        let (directory, _) = try setUp()
        let path = directory + "/file"
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            try? FileIO.writeAtomically(path, Array(repeating: UInt8(index), count: 4_096))
        }
        let bytes = try FileIO.readBytes(path)
        #expect(bytes.count == 4_096 && Set(bytes).count == 1)
        #expect(try FileIO.listDirectory(directory) == ["file"])
    }

    /// A `latest` link replaced while someone else's file sits at the old predictable temporary name
    /// (`.latest.json.tmp-PID`): the new link is made under a fresh name, and their file is neither deleted nor
    /// renamed over `latest`.
    @Test func replacingALatestLinkLeavesOtherFilesAlone() throws {
        let (directory, _) = try setUp()
        let theirs = "\(directory)/.latest.json.tmp-\(getpid())"
        try "theirs\n".write(toFile: theirs, atomically: false, encoding: .utf8)
        try PublishedFiles.link("latest.json", to: "snapshot-1.json", in: directory)
        try PublishedFiles.link("latest.json", to: "snapshot-2.json", in: directory)
        #expect(PublishedFiles.target(of: directory + "/latest.json") == "snapshot-2.json")
        #expect(text(theirs) == "theirs\n")
        #expect(Set(try FileIO.listDirectory(directory)) == [".latest.json.tmp-\(getpid())", "latest.json"])
    }

    /// Retention by ledger: of the files matching the pattern, only those this program wrote and recorded are
    /// deleted; someone else's `snapshot-….json` in the same directory stays, however old.
    @Test func retentionDeletesOnlyRecordedFiles() throws {
        let (directory, _) = try setUp()
        let ledger = PublishedFiles.Ledger(directory: directory, kind: "snapshots")
        let foreign = ["snapshot-20200101T000000Z.json", "snapshot-19990101T000000Z.json"]
        for name in foreign { try "theirs\n".write(toFile: "\(directory)/\(name)", atomically: false, encoding: .utf8) }
        let ours = (1...5).map { "snapshot-2026010\($0)T000000Z.json" }
        for name in ours {
            try PublishedFiles.publish(
                Array("ours\n".utf8), name: name, latest: "latest.json", in: directory, ledger: ledger)
            try PublishedFiles.prune(keep: 2, in: directory, ledger: ledger) {
                $0.hasPrefix("snapshot-") && $0.hasSuffix(".json")
            }
        }
        let left = Set(try FileIO.listDirectory(directory))
        #expect(left == Set(foreign + ours.suffix(2) + ["latest.json", ".netpulse-snapshots.published"]))
        #expect(try ledger.names() == Set(ours.suffix(2)))
        #expect(PublishedFiles.target(of: directory + "/latest.json") == ours.last)
    }

    /// A ledger that is a symbolic link, or that names files outside its directory, deletes nothing outside it.
    @Test func aPlantedLedgerDeletesNothingOutsideItsDirectory() throws {
        let (directory, victim) = try setUp()
        let ledger = PublishedFiles.Ledger(directory: directory, kind: "snapshots")
        // A ledger naming the victim by a relative path: such names are ignored.
        try "../victim.db\n/\(victim)\n.\n..\n".write(toFile: ledger.path, atomically: false, encoding: .utf8)
        #expect(try ledger.names().isEmpty)
        try PublishedFiles.prune(keep: 0, in: directory, ledger: ledger) { _ in true }
        #expect(text(victim) == "precious\n")
        // A ledger that is a link to a list elsewhere is refused, not read.
        let list = FileIO.parentDirectory(directory) + "/list"
        try "victim.db\n".write(toFile: list, atomically: false, encoding: .utf8)
        try FileIO.remove(ledger.path)
        #expect(symlink(list, ledger.path) == 0)
        #expect(throws: FileIO.Failure.self) {
            try PublishedFiles.prune(keep: 0, in: directory, ledger: ledger) { _ in true }
        }
        #expect(text(victim) == "precious\n")
    }
}
