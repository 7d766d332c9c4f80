import Logging
import PulseAnalytics
import PulseCore
import PulseFormats
import PulseQuery
import PulseReports
import PulseSettings
import PulseStore
import ServiceLifecycle

/// Writes analytics snapshots every `[snapshots] interval` (aligned to the wall clock, ``settle(interval:)`` after
/// each boundary so the last batches of the period are in): JSON and CSV, each written atomically, `latest.json` and
/// `latest.csv` always naming the newest complete file, older ones deleted past `keep` (only files it wrote and
/// recorded in the directory's ledger, ``PublishedFiles/Ledger``).
struct SnapshotService: Service, Sendable {
    let store: any MetricStore
    let config: DaemonConfig
    let clock: WallClock
    let logger: Logger

    func run() async throws {
        let settings = config.snapshots
        do {
            try FileIO.createDirectory(settings.directory, mode: FileIO.publishedDirectory)
        } catch {
            logger.error("snapshots are off: \(error)")
            return
        }
        while !Task.isShuttingDownGracefully {
            let now = clock.now()
            let next = (now / settings.interval + 1) * settings.interval + Self.settle(interval: settings.interval)
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(next - now)) }
            } catch {
                return
            }
            do {
                let written = try await write(at: clock.now())
                logger.info("snapshot written: \(written.joined(separator: ", "))")
            } catch {
                logger.error("snapshot failed: \(error)")
            }
        }
    }

    /// How long after a boundary a snapshot is made: the dashboards' settling time (agents close batches every 10 s
    /// and they commit soon after, so the period just ended is complete by then), or half the interval when that
    /// is shorter.
    ///
    /// Why not sooner: the live pages redraw in the seconds after a boundary, as the first batches past it commit,
    /// and a snapshot of 10,000 interfaces is about 20 s of a core's work; started 5 s after the boundary, it fell
    /// on their redraws (docs/benchmarks.md, "HTTP").
    static func settle(interval: Int64) -> Int64 {
        min(DashboardService.settle, interval / 2)
    }

    /// Computes and writes one snapshot; returns the files written.
    func write(at now: Int64) async throws -> [String] {
        let settings = config.snapshots
        let engine = try await config.windowEngine(over: store)
        let snapshot = Snapshot(
            try await SnapshotQuery(engine: engine).read(settings.contents, now: now), source: config.name)
        let stamp = FileName.stamp(now)
        let ledger = PublishedFiles.Ledger(directory: settings.directory, kind: "snapshots")
        var written = [String]()
        for (enabled, format, text) in [(settings.json, "json", snapshot.json), (settings.csv, "csv", snapshot.csv)]
        where enabled {
            let name = "snapshot-\(stamp).\(format)"
            try PublishedFiles.publish(
                Array(text.utf8), name: name, latest: "latest.\(format)", in: settings.directory, ledger: ledger)
            try PublishedFiles.prune(keep: settings.keep, in: settings.directory, ledger: ledger) {
                $0.hasPrefix("snapshot-") && $0.hasSuffix(".\(format)")
            }
            written.append("\(settings.directory)/\(name)")
        }
        return written
    }
}
