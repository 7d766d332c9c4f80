import PulseAnalytics
import PulseCore
import PulseQuery

/// How many rendered files of each dashboard and range are kept; the newest is always kept.
public struct DashboardRetention: Sendable, Hashable {
    /// Keep at most this many (at least 1); nil: no limit by count.
    public var keep: Int?
    /// Delete files rendered longer ago than this (ms); nil: no limit by age.
    public var maximumAge: Int64?

    /// Keep the newest `keep` (at least 1) and those younger than `maximumAge` ms; nil lifts a limit.
    public init(keep: Int? = 48, maximumAge: Int64? = nil) {
        self.keep = keep.map { max(1, $0) }
        self.maximumAge = maximumAge
    }
}

/// Publishes rendered dashboards into one directory that browsers, static web servers and scripts read while it
/// changes: each file is written atomically (never half-written), `STEM-RANGE-latest.svg` always names the newest
/// complete file, `index.html` shows the latest of each, and old files are deleted by ``DashboardRetention``: only
/// files it wrote and recorded in the directory's ledger (``PublishedFiles/Ledger``), so a file of the same pattern
/// that someone else put there is neither listed nor deleted.
///
/// Blocking file I/O: call it from a task that may block (not an event loop).
public struct DashboardPublisher: Sendable {
    /// The output directory, made when missing.
    public var directory: String
    /// How many files of each dashboard and range stay.
    public var retention: DashboardRetention
    /// How often an open index page reloads itself, seconds.
    public var refreshSeconds: Int
    /// The names of the files this publisher wrote in `directory`: only those are shown and deleted.
    public var ledger: PublishedFiles.Ledger { PublishedFiles.Ledger(directory: directory, kind: "dashboards") }

    /// A publisher into `directory`; an open index reloads every `refreshSeconds` (at least 1).
    public init(directory: String, retention: DashboardRetention = DashboardRetention(), refreshSeconds: Int = 60) {
        self.directory = directory
        self.retention = retention
        self.refreshSeconds = max(1, refreshSeconds)
    }

    /// Writes `rendered`, points each one's `latest` symlink at it, rewrites `index.html` for `dashboards` and
    /// `ranges` from what is then on disk, and deletes files past the retention.
    ///
    /// The order keeps every name a reader can see valid: a file is complete before `latest` names it, the index
    /// names only files the retention keeps, and files are deleted only after the index stopped naming them.
    /// - Returns: the names of the files written, in the order of `rendered`.
    /// - Throws: ``FileIO/Failure`` when the directory cannot be made or a file cannot be written or deleted.
    @discardableResult
    public func publish(
        _ rendered: [RenderedDashboard], dashboards: [DashboardSpec],
        ranges: [DashboardRange] = DashboardRange.standard,
        now: Int64
    ) throws -> [String] {
        try FileIO.createDirectory(directory, mode: FileIO.publishedDirectory)
        var written = [String]()
        for dashboard in rendered {
            try FileIO.writeAtomically("\(directory)/\(dashboard.fileName)", Array(dashboard.svg.utf8), mode: FileIO.publishedFile)
            written.append(dashboard.fileName)
        }
        try ledger.record(written)
        for dashboard in rendered {
            try PublishedFiles.link(dashboard.latestName, to: dashboard.fileName, in: directory)
        }
        let recorded = try ledger.names()
        // Every dashboard and range on disk, published now or earlier (ranges render at their own pace).
        var stems = [(stem: String, range: DashboardRange)]()
        for spec in dashboards { for range in ranges { stems.append((spec.fileStem, range)) } }
        for dashboard in rendered
        where !stems.contains(where: { $0.stem == dashboard.fileStem && $0.range == dashboard.range }) {
            stems.append((dashboard.fileStem, dashboard.range))
        }
        var kept = [String: [DashboardFile]]()
        var doomed = [String]()
        for (stem, range) in stems {
            let files = try DashboardFiles.files(stem: stem, range: range, in: directory).filter {
                recorded.contains($0.name)
            }
            let latest = PublishedFiles.target(of: "\(directory)/\(DashboardFiles.latest(stem: stem, range: range))")
            let (keep, delete) = Self.plan(files, latest: latest, retention: retention, now: now)
            kept[DashboardFiles.prefix(stem: stem, range: range)] = keep
            doomed += delete.map(\.name)
        }
        let page = IndexPage(
            dashboards: dashboards.map { spec in
                IndexPage.Entry(
                    title: spec.title, stem: spec.fileStem,
                    ranges: ranges.map { range in
                        (range: range, files: kept[DashboardFiles.prefix(stem: spec.fileStem, range: range)] ?? [])
                    })
            }, refreshSeconds: refreshSeconds, generatedAt: now)
        try FileIO.writeAtomically("\(directory)/index.html", Array(page.html().utf8), mode: FileIO.publishedFile)
        try PublishedFiles.remove(doomed, in: directory, ledger: ledger)
        return written
    }

    /// Which of one dashboard and range's files (oldest first) to keep and which to delete: beyond `keep`, or
    /// older than `maximumAge`, except the newest and the one `latest` names.
    static func plan(
        _ files: [DashboardFile], latest: String?, retention: DashboardRetention, now: Int64
    ) -> (keep: [DashboardFile], delete: [DashboardFile]) {
        var keep = [DashboardFile]()
        var delete = [DashboardFile]()
        for (index, file) in files.enumerated() {
            let newer = files.count - 1 - index
            let protected = newer == 0 || file.name == latest
            let tooMany = retention.keep.map { newer >= $0 } ?? false
            let tooOld = retention.maximumAge.map { file.renderedAt < now - $0 } ?? false
            if !protected && (tooMany || tooOld) { delete.append(file) } else { keep.append(file) }
        }
        return (keep, delete)
    }
}
