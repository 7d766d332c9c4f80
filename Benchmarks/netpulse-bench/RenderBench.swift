import Foundation
import PulseCore
import PulseDaemon
import PulseQuery
import PulseReports
import PulseSettings
import PulseStore
import PulseStoreSQLite

/// Times drawing the default dashboards from a store (one made by `query-store`), as the daemon's dashboard
/// service draws them: the catalogue loaded once, then the fleet overview and one host page for each range, each
/// drawn `runs` times; prints the median and the SVG's size. `BENCH_PACED=1` makes the reads as the daemon makes
/// them (``ReadPacing``, in parts of 500 series, here never waiting).
enum RenderBench {
    static func run(config path: String, runs: Int) async throws {
        let config = try DaemonConfig.load(path: path)
        let store = try SQLiteStore(path: config.storePath, settings: config.store, readOnly: true)
        let began = Date()
        let catalogue = try await Catalogue.load(from: store, rules: config.store.rules)
        let catalogueTime = Date().timeIntervalSince(began)
        let engine = WindowEngine(
            store: store, catalogue: catalogue,
            levels: WindowEngine.retained(try await store.levels(), config.retention), calendar: config.calendar,
            billing: config.billing)
        let interfaces = catalogue.series.filter { $0.kind == .interface }.count
        print(
            "dashboards of \(interfaces) interfaces (catalogue loaded in \(Int(catalogueTime * 1_000)) ms), median of \(runs):"
        )
        let specs = DashboardSpec.defaults(for: catalogue, groupBy: config.billing.groupBy)
        let now = WallClock.system.now()
        let pacing = ProcessInfo.processInfo.environment["BENCH_PACED"] == "1" ? ReadPacing {} : nil
        if pacing != nil { print("  (reads paced as the daemon's, in parts of \(ReadPacing {}.partSize) series)") }
        for spec in specs.prefix(2) {
            for range in DashboardRange.standard {
                var times = [Double]()
                var size = 0
                for _ in 0..<runs {
                    let start = Date()
                    let rendered = try await ReadPacing.$current.withValue(pacing) {
                        DashboardRenderer().render(
                            try await DashboardQuery(engine: engine).read(spec, range: range, now: now))
                    }
                    times.append(Date().timeIntervalSince(start))
                    size = rendered.svg.utf8.count
                }
                let median = times.sorted()[times.count / 2]
                let name = "\(spec.title), \(range.title.lowercased())"
                print(
                    "  \(name.padding(toLength: 44, withPad: " ", startingAt: 0)) \(Int(median * 1_000)) ms  (\(size / 1_024) KiB)"
                )
            }
        }
        // Where the fleet overview's time goes: each panel alone (the page's own reads of the scope included).
        guard let fleet = specs.first, ProcessInfo.processInfo.environment["BENCH_PANELS"] != nil else { return }
        print("fleet overview panel by panel, median of \(runs), ms (hour / day / week / month):")
        for panel in fleet.panels {
            var cells = [String]()
            for range in DashboardRange.standard {
                let single = DashboardSpec(name: fleet.name, title: fleet.title, scope: fleet.scope, panels: [panel])
                var times = [Double]()
                for _ in 0..<runs {
                    let start = Date()
                    _ = DashboardRenderer().render(
                        try await DashboardQuery(engine: engine).read(single, range: range, now: now))
                    times.append(Date().timeIntervalSince(start))
                }
                cells.append("\(Int(times.sorted()[times.count / 2] * 1_000))")
            }
            print(
                "  \("\(panel.kind)".padding(toLength: 36, withPad: " ", startingAt: 0)) \(cells.joined(separator: " / "))"
            )
        }
    }
}
