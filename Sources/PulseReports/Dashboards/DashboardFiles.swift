import PulseCore
import PulseQuery

/// How dashboard files are named in the output directory: `STEM-RANGE-STAMP.svg` for each render and the symlink
/// `STEM-RANGE-latest.svg` naming the newest.
public enum DashboardFiles {
    /// `fleet-hour-`: what every file of a dashboard and range starts with.
    public static func prefix(stem: String, range: DashboardRange) -> String {
        "\(stem)-\(FileName.safe(range.name))-"
    }

    /// `fleet-hour-latest.svg`.
    public static func latest(stem: String, range: DashboardRange) -> String {
        prefix(stem: stem, range: range) + "latest.svg"
    }

    /// When `range` was last drawn for the dashboards `stems`, as their `latest` links in `directory` say: the
    /// oldest of the times they name, so one page left behind counts; `Int64.min` when a link names no page of its
    /// own (as if never drawn); nil when none of them has a link yet. Blocking: reads the links.
    public static func lastDrawn(range: DashboardRange, stems: [String], in directory: String) -> Int64? {
        stems.compactMap { stem -> Int64? in
            let link = "\(directory)/\(latest(stem: stem, range: range))"
            guard let target = PublishedFiles.target(of: link) else { return nil }
            let prefix = prefix(stem: stem, range: range)
            guard target.hasPrefix(prefix), target.hasSuffix(".svg"), FileIO.exists("\(directory)/\(target)") else {
                return Int64.min
            }
            return FileName.time(ofStamp: target.dropFirst(prefix.count).dropLast(".svg".count)) ?? Int64.min
        }.min()
    }

    /// The rendered files of one dashboard and range in `directory`, oldest first.
    ///
    /// A file belongs to it only when the rest of its name after the prefix is exactly a stamp and `.svg`, so
    /// dashboards whose names extend another's (`web` and `web-hour`) never take each other's files.
    /// Blocking: reads the directory.
    public static func files(stem: String, range: DashboardRange, in directory: String) throws -> [DashboardFile] {
        let prefix = prefix(stem: stem, range: range)
        return try FileIO.listDirectory(directory).compactMap { name -> DashboardFile? in
            guard name.hasPrefix(prefix), name.hasSuffix(".svg") else { return nil }
            let stamp = name.dropFirst(prefix.count).dropLast(".svg".count)
            guard let time = FileName.time(ofStamp: stamp) else { return nil }
            return DashboardFile(name: name, renderedAt: time)
        }.sorted { $0.name < $1.name }
    }
}

/// A rendered dashboard file in the output directory.
public struct DashboardFile: Sendable, Hashable {
    /// The file's name in the directory.
    public var name: String
    /// The time its stamp names (ms, whole seconds).
    public var renderedAt: Int64
}
