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
///
/// Its reads go in parts of ``partSize`` series, one at a time (``ReadPacing``), and before each part it waits
/// while ``giveWay`` says so: while someone waits for a live page or the API (``InteractiveReads``), or ingest is
/// behind, for at most ``longestWait`` per snapshot, so that one is made every interval however busy the daemon.
struct SnapshotService: Service, Sendable {
    let store: any MetricStore
    let config: DaemonConfig
    let clock: WallClock
    let logger: Logger
    /// Whether the snapshot's reads should wait before their next part.
    var giveWay: @Sendable () -> Bool = { false }

    /// The longest one snapshot waits in all (its interval is minutes).
    var longestWait = Duration.seconds(60)

    /// Series per part: a part of hosts' month of 5-minute buckets is tens of milliseconds of reading, the longest
    /// a page that starts reading during it shares the CPU with it.
    static let partSize = 100

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
                let waited =
                    written.waited > .zero
                    ? " (after giving way to live pages, the API or ingest for \(written.waited.milliseconds) ms)" : ""
                logger.info("snapshot written: \(written.files.joined(separator: ", "))\(waited)")
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
    /// on their redraws (docs/benchmarks.md, "HTTP"). An agent whose counters do not move sends them only every
    /// `[throttle] idle_heartbeat` (a minute), so its first batch past a boundary can land at any time in the minute
    /// after it: no start time misses the redraws, and the snapshot gives way to them instead (``giveWay``).
    static func settle(interval: Int64) -> Int64 {
        min(DashboardService.settle, interval / 2)
    }

    /// Computes and writes one snapshot; returns the files written and how long its reads waited (``giveWay``).
    func write(at now: Int64) async throws -> (files: [String], waited: Duration) {
        let settings = config.snapshots
        let engine = try await config.windowEngine(over: store)
        let pacer = DashboardService.Pacer(budget: longestWait, behind: giveWay)
        let data = try await ReadPacing.$current.withValue(
            ReadPacing(partSize: Self.partSize) { try await pacer.yield() }
        ) {
            try await SnapshotQuery(engine: engine).read(settings.contents, now: now)
        }
        let snapshot = Snapshot(data, source: config.name)
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
        return (written, pacer.waited)
    }
}
