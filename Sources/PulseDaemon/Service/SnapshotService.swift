import Logging
import PulseAnalytics
import PulseCore
import PulseQuery
import PulseStore
import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Writes analytics snapshots every `[snapshots] interval` (aligned to the wall clock, a few seconds after each
/// boundary so the last batches of the period are in): JSON and CSV, each written atomically, `latest.json` and
/// `latest.csv` always naming the newest complete file, older ones deleted past `keep`.
final class SnapshotService: Service, Sendable {
    let store: any MetricStore
    let config: DaemonConfig
    let logger: Logger

    init(store: any MetricStore, config: DaemonConfig, logger: Logger) {
        self.store = store
        self.config = config
        self.logger = logger
    }

    func run() async throws {
        let settings = config.snapshots
        do {
            try FileIO.createDirectory(settings.directory, mode: 0o755)
        } catch {
            logger.error("snapshots are off: \(error)")
            return
        }
        while !Task.isShuttingDownGracefully {
            let now = WallClock.milliseconds()
            let next = (now / settings.interval + 1) * settings.interval + 5_000
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(next - now)) }
            } catch {
                return
            }
            do {
                let written = try await write(at: WallClock.milliseconds())
                logger.info("snapshot written: \(written.joined(separator: ", "))")
            } catch {
                logger.error("snapshot failed: \(error)")
            }
        }
    }

    /// Computes and writes one snapshot; returns the files written.
    func write(at now: Int64) async throws -> [String] {
        let settings = config.snapshots
        let catalogue = try await Catalogue.load(from: store, rules: config.store.rules)
        let engine = WindowEngine(
            store: store, catalogue: catalogue,
            levels: WindowEngine.retained(config.store.levels, config.retention), calendar: config.calendar,
            billing: config.billing)
        let snapshot = try await Snapshot.make(
            engine: engine, contents: settings.contents, now: now, source: config.name)
        let stamp = Self.stamp(now)
        var written = [String]()
        for (enabled, format, text) in [(settings.json, "json", snapshot.json), (settings.csv, "csv", snapshot.csv)]
        where enabled {
            let name = "snapshot-\(stamp).\(format)"
            try SnapshotFiles.publish(
                Array(text.utf8), name: name, latest: "latest.\(format)", in: settings.directory)
            try SnapshotFiles.prune(suffix: ".\(format)", keep: settings.keep, in: settings.directory)
            written.append("\(settings.directory)/\(name)")
        }
        return written
    }

    /// `20261123T140500Z`: sorts by time, safe in file names.
    static func stamp(_ time: Int64) -> String {
        RFC3339.text(time / 1_000 * 1_000).filter { $0 != "-" && $0 != ":" }
    }
}

/// Atomic publication of report files: written, fsynced, renamed into place, then the `latest` symlink replaced
/// atomically, so a reader never sees a half-written file or a `latest` pointing at one.
enum SnapshotFiles {
    static func publish(_ bytes: [UInt8], name: String, latest: String, in directory: String) throws {
        try FileIO.writeAtomically("\(directory)/\(name)", bytes, mode: 0o644)
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

    /// Deletes the oldest `snapshot-*` files with `suffix` beyond the newest `keep`.
    static func prune(suffix: String, keep: Int, in directory: String) throws {
        let names = try FileIO.listDirectory(directory).filter { $0.hasPrefix("snapshot-") && $0.hasSuffix(suffix) }
            .sorted()
        for name in names.dropLast(keep) { try FileIO.remove("\(directory)/\(name)") }
    }
}
