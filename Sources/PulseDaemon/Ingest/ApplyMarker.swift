import PulseCore
import PulseStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Which batch the store is applying, so that a batch whose applying kills the daemon (a bug that traps, running
/// out of memory, a watchdog kill) cannot kill every start after it: the daemon that finds it died twice on the
/// same batch sets that batch aside and goes on (`docs/reliability.md`, "A poison batch").
///
/// A small file beside the journal (or in the state directory), rewritten before each batch with `pwrite` and no
/// `fsync`: a process that dies leaves its writes in the kernel's page cache, which is all this needs (a power cut
/// is not a poison batch), and a write costs a microsecond, not a disk flush. Before the commit the mark says so, so
/// a death in the commit itself (a disk) is blamed on no batch.
///
/// The store applies one commit at a time, so only its writer thread calls ``applying(_:)`` and ``committing()``
/// (``stop()`` may come from any thread: a write of the whole mark at once, a stale one at worst).
final class ApplyMarker: Sendable {
    /// A batch being applied, named by its journal entry (0 without a journal), agent, stream and sequence.
    struct Mark: Equatable, Sendable {
        var entry: Int64
        var agent: UInt64
        var stream: UInt64
        var sequence: UInt64
        /// How many earlier runs of the daemon died while applying this batch.
        var deaths: Int64

        func names(_ batch: IngestBatch) -> Bool {
            agent == ApplyMarker.hash(batch.agent.name) && stream == batch.stream && sequence == batch.sequence
        }
    }

    let path: String
    private let fd: Int32
    /// Set once the daemon is stopping: what applying does from then on is no batch's fault if the stop's deadline
    /// ends the process (the next start would otherwise blame the batch being applied, and two such stops set a good
    /// batch aside).
    private let stopped = Atomic<Bool>(false)

    /// Opens (or creates) the marker file at `path`.
    init(path: String) throws(FileIO.Failure) {
        self.path = path
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw FileIO.Failure(operation: "open", path: path, errno: errno) }
    }

    deinit { close(fd) }

    /// The batch the last run was applying when it died, if it died while applying one.
    func interrupted() -> Mark? {
        var words = [Int64](repeating: 0, count: 6)
        let count = words.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count == 48, words[0] == Self.applyingPhase else { return nil }
        return Mark(
            entry: words[1], agent: UInt64(bitPattern: words[2]), stream: UInt64(bitPattern: words[3]),
            sequence: UInt64(bitPattern: words[4]), deaths: words[5])
    }

    /// The daemon is stopping on purpose: from now on no batch is marked.
    func stop() {
        stopped.store(true, ordering: .relaxed)
        write([Self.committingPhase, 0, 0, 0, 0, 0])
    }

    /// Records that the store is about to apply the batch `mark` names.
    func applying(_ mark: Mark) {
        guard !stopped.load(ordering: .relaxed) else { return }
        write([
            Self.applyingPhase, mark.entry, Int64(bitPattern: mark.agent), Int64(bitPattern: mark.stream),
            Int64(bitPattern: mark.sequence), mark.deaths,
        ])
    }

    /// Records that the batches are applied and the commit is under way (a death now is no batch's fault).
    func committing() {
        write([Self.committingPhase, 0, 0, 0, 0, 0])
    }

    private func write(_ words: [Int64]) {
        // A failed write leaves the older mark: at worst a later start blames a batch once wrongly, and a batch is
        // only set aside after two deaths on it.
        _ = words.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    static let applyingPhase: Int64 = 1
    static let committingPhase: Int64 = 2

    /// FNV-1a of an agent's name: the mark has a fixed size, and a batch is also named by its random stream.
    static func hash(_ name: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }
}
