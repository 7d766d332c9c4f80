import Foundation
import PulseAnalytics
import PulseCore
import PulseQuery
import PulseStore

/// The independent reference: `Tests/Oracle/oracle.py`, written from docs/windows.md alone, and the comparison of
/// its answer with what a real store holds.
enum Oracle {
    static let script = FileIO.parentDirectory(FileIO.parentDirectory(#filePath)) + "/Oracle/oracle.py"

    /// Runs `Tests/Oracle/oracle.py` on `oracleCase` and returns what it printed; `passes` says when bills were kept
    /// (``OracleCase/json(passes:)``). A `shared` answer is kept for the run of the tests, for another test that
    /// asks the same (only those: the random fleets' answers would pile up).
    static func run(_ oracleCase: OracleCase, passes: [(now: Int64, batches: Int)] = [], shared: Bool = false)
        throws -> [String: Any]
    {
        let json = oracleCase.json(passes: passes)
        let data = try shared ? answers.answer(to: json) { try answer(json) } : answer(json)
        return try JSONSerialization.jsonObject(with: data) as! [String: Any]
    }

    /// Shared answers by their input: the SQLite and PostgreSQL billing tests give the oracle the same case and
    /// passes, and it takes half a minute to work out three months.
    private static let answers = Answers()

    private final class Answers: @unchecked Sendable {
        private final class Entry: @unchecked Sendable {
            let lock = NSLock()
            var answer: Data?
        }
        private let lock = NSLock()
        private var entries = [String: Entry]()

        /// The answer to `input`, worked out by `work` once: a second test asking meanwhile waits for the first.
        func answer(to input: String, _ work: () throws -> Data) throws -> Data {
            let entry = lock.withLock {
                let entry = entries[input] ?? Entry()
                entries[input] = entry
                return entry
            }
            return try entry.lock.withLock {
                if let answer = entry.answer { return answer }
                let answer = try work()
                entry.answer = answer
                return answer
            }
        }
    }

    /// Runs the oracle on a case's JSON and returns what it printed, leaving no file behind.
    private static func answer(_ json: String) throws -> Data {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = directory + "/case.json"
        try json.write(toFile: input, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [Self.script]
        process.standardInput = FileHandle(forReadingAtPath: input)
        // The answer goes through a file, not a pipe: a server another test starts meanwhile (PostgreSQL, a daemon)
        // inherits every descriptor open at that moment and would hold the pipe open, so reading it to its end
        // would wait for that server (this hung a whole test run, both of its threads blocked).
        let outputPath = input + ".out"
        FileManager.default.createFile(atPath: outputPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        defer { try? output.close() }
        process.standardOutput = output
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw OracleFailure(description: "oracle.py exited with status \(process.terminationStatus)")
        }
        return try Data(contentsOf: URL(fileURLWithPath: outputPath))
    }

    static func name(_ series: SeriesRecord) -> String {
        switch series.kind {
        case .interface: "interface:\(series.agent!)/\(series.interface!)"
        case .host: "host:\(series.agent!)"
        case .group: "group:\(series.group!)"
        case .fleet: "fleet"
        }
    }

    static func int(_ value: Any?) -> Int64? {
        guard let number = value as? NSNumber, !(value is NSNull) else { return nil }
        return number.int64Value
    }

    /// Every bucket of the case's levels, every window figure and every bill in `store` against the oracle's
    /// `expected` answer. Returns each disagreement in words (empty when the store agrees to the last digit).
    static func compare(_ store: any MetricStore, _ oracleCase: OracleCase, _ expected: [String: Any], arrival: String)
        async throws -> [String]
    {
        var differences = [String]()
        func check(_ holds: Bool, _ what: @autoclosure () -> String) { if !holds { differences.append(what()) } }
        let series = try await store.series()
        let byName = Dictionary(uniqueKeysWithValues: series.map { (Self.name($0), $0) })
        let expectedBuckets = expected["buckets"] as! [String: [String: [[Any]]]]
        check(Set(byName.keys) == Set(expectedBuckets.keys), "series (\(arrival))")

        // Every bucket of every level, interfaces and scopes.
        for (name, levels) in expectedBuckets {
            guard let record = byName[name] else { continue }
            for (width, rows) in levels {
                let level = RollupLevel(width: Int64(width)!)
                let buckets =
                    try await store.buckets(level: level, series: [record.id], from: .min, to: .max)[record.id] ?? []
                let actual = buckets.map { bucket -> [Int64] in
                    let values = bucket.values
                    return [bucket.start] + (0..<8).map { values.traffic[$0] } + [
                        values.measuredMilliseconds, values.interpolatedMilliseconds, Int64(values.peakRx),
                        Int64(values.peakTx), Int64(values.speedMbps),
                    ] + (0..<6).map { values.events[$0] } + [
                        values.flaggedMilliseconds, values.memberMilliseconds, values.capacity,
                    ]
                }
                let wanted = rows.map { row -> [Int64] in
                    [Self.int(row[0])!] + (row[1] as! [Any]).map { Self.int($0)! } + (2...6).map { Self.int(row[$0])! }
                        + (row[7] as! [Any]).map { Self.int($0)! } + (8...10).map { Self.int(row[$0])! }
                }
                // A bucket whose every column is zero is no bucket (docs/windows.md, "Rollups"): the store keeps one
                // when a step is taken out again, the oracle one for an instant step that counted nothing. Compared
                // on both sides alike. (An outage that counted nothing is a bucket: it has member time.)
                func nonEmpty(_ rows: [[Int64]]) -> [[Int64]] { rows.filter { $0.dropFirst().contains { $0 != 0 } } }
                check(
                    nonEmpty(actual) == nonEmpty(wanted),
                    "\(name) at \(level) (\(arrival)): \(firstDifference(nonEmpty(actual), nonEmpty(wanted)))")
            }
        }

        // Unplaced totals (`docs/windows.md`, "Time that cannot be placed"): per series and UTC day of receipt, and
        // nothing on days the oracle has none.
        let expectedUnplaced = expected["unplaced"] as? [String: [String: [Any]]] ?? [:]
        for record in series {
            let name = Self.name(record)
            var sum = [Int64](repeating: 0, count: 9)
            for (day, row) in expectedUnplaced[name] ?? [:] {
                let start = Int64(day)!
                let wanted = row.map { Self.int($0)! }
                for index in sum.indices { sum[index] += wanted[index] }
                let got = try await store.unplaced(series: [record.id], from: start, to: start + 86_400_000)[record.id]
                let actual =
                    got.map { totals in (0..<8).map { totals.traffic[$0] } + [totals.steps] } ?? sum.map { _ in 0 }
                check(
                    actual == wanted,
                    "unplaced of \(name) received on \(RFC3339.text(start)) (\(arrival)): store \(actual) oracle \(wanted)"
                )
            }
            let all = try await store.unplaced(series: [record.id], from: .min, to: .max)[record.id]
            let total = all.map { totals in (0..<8).map { totals.traffic[$0] } + [totals.steps] } ?? sum.map { _ in 0 }
            check(total == sum, "unplaced of \(name) on all days (\(arrival)): store \(total) oracle \(sum)")
        }

        // Window figures at each window's resolution, read as the daemon's configuration says.
        let config = try oracleCase.daemonConfig()
        let catalogue = try await Catalogue.load(from: store, rules: config.store.rules)
        let engine = WindowEngine(
            store: store, catalogue: catalogue, levels: WindowEngine.retained(config.store.levels, config.retention),
            calendar: config.calendar, billing: config.billing)
        // A case may ask for the same window twice (a random one and a named one can coincide): each key holds the
        // oracle's figures in order, and each of the store's takes one.
        var figures = [String: [[String: Any]]]()
        for item in expected["figures"] as! [[String: Any]] {
            let window = item["window"] as! [Any]
            let name = (item["name"] as? String).map { " \($0)" } ?? ""
            figures[
                "\(item["series"]!) \(Self.int(window[0])!) \(Self.int(window[1])!) \(Self.int(item["resolution"])!)\(name)",
                default: []
            ].append(item)
        }
        // The named windows as the engine works them out: their bounds and resolution are compared with the
        // oracle's through the keys.
        var windows = oracleCase.windows.map { (Window(from: $0.0, to: $0.1), RollupLevel(width: $0.2), "") }
        for name in oracleCase.namedWindows {
            guard let spec = WindowSpec(parsing: name) else {
                differences.append("\(name) is not a window name")
                continue
            }
            let window = engine.window(spec, now: oracleCase.now)
            guard let level = try? engine.resolution(for: window, now: oracleCase.now) else { continue }
            windows.append((window, level, " \(name)"))
        }
        for (window, level, name) in windows {
            let (from, to, width) = (window.from, window.to, level.width)
            for scope in try await engine.figures(series, window: window, now: oracleCase.now, resolution: level) {
                let key = "\(Self.name(scope.series)) \(from) \(to) \(width)\(name)"
                guard var wanted = figures[key], !wanted.isEmpty else {
                    differences.append("the oracle has no figures for \(key)")
                    continue
                }
                let want = wanted.removeFirst()
                figures[key] = wanted.isEmpty ? nil : wanted
                let got = scope.figures
                func pair(_ name: String) -> [Int64?] { (want[name] as! [Any]).map { Self.int($0) } }
                let checks: [(String, [Int64?], [Int64?])] = [
                    ("bytes", [got.bytes.rx, got.bytes.tx], pair("bytes")),
                    ("average", [got.average.rx, got.average.tx], pair("average")),
                    ("minimum", [got.minimum.rx, got.minimum.tx], pair("minimum")),
                    ("maximum", [got.maximum.rx, got.maximum.tx], pair("maximum")),
                    ("last", [got.last.rx, got.last.tx], pair("last")),
                    ("p50", [got.p50.rx, got.p50.tx], pair("p50")), ("p95", [got.p95.rx, got.p95.tx], pair("p95")),
                    ("p99", [got.p99.rx, got.p99.tx], pair("p99")),
                    ("utilisation", [got.utilisation.rx, got.utilisation.tx], pair("utilisation")),
                    ("peak", [got.peak.rx, got.peak.tx], pair("peak")),
                    (
                        "ratios", [got.errorRatio, got.dropRatio],
                        [Self.int(want["error_ratio"]), Self.int(want["drop_ratio"])]
                    ),
                    (
                        "coverage",
                        [got.coverage, got.measuredCoverage, Int64(got.members), Int64(got.bucketsWithData)],
                        [
                            Self.int(want["coverage"]), Self.int(want["measured_coverage"]), Self.int(want["members"]),
                            Self.int(want["buckets_with_data"]),
                        ]
                    ),
                ]
                for (field, actual, wanted) in checks {
                    check(actual == wanted, "\(field) of \(key) (\(arrival))")
                }
            }
        }

        for (key, left) in figures.sorted(by: { $0.key < $1.key }) {
            for _ in left { differences.append("the store has no figures for \(key)") }
        }

        // Top-N (`docs/windows.md`, "Top-N"): every series of the kind a candidate (`counted`: the fleet's counted
        // interfaces), the same names, values and order.
        for item in expected["top"] as? [[String: Any]] ?? [] {
            let query = item["query"] as! [Any]
            let (from, to) = (Self.int(query[0])!, Self.int(query[1])!)
            let kind = query[2] as! String
            let count = Int(Self.int(query[4])!)
            guard let ranking = Ranking(rawValue: query[3] as! String) else {
                differences.append("top by \(query[3]) is not a ranking")
                continue
            }
            let ranked: [Ranked]
            if kind == "counted" {
                // What `netpulse top` ranks without options, through the read the CLI and the API run.
                let read = try TopRead(
                    ReadParameters([
                        ("by", ranking.rawValue), ("top", "\(count)"), ("from", RFC3339.text(from)),
                        ("to", RFC3339.text(to)),
                    ]))
                ranked = try await read.answer(engine, now: oracleCase.now).ranked
            } else {
                let candidates = series.filter { $0.kind.name == kind }
                ranked = try await engine.top(
                    candidates, by: ranking, window: Window(from: from, to: to), now: oracleCase.now, count: count)
            }
            let actual = ranked.map { "\($0.series.name)=\($0.value)" }
            let wanted = (item["ranked"] as! [[Any]]).map { "\($0[0] as! String)=\(Self.int($0[1])!)" }
            check(
                actual == wanted,
                "top \(count) \(kind)s by \(ranking) \(from) \(to) (\(arrival)): store \(actual) oracle \(wanted)")
        }

        // Bills, each series by its own terms: an open bill as it stands; an issued one when the oracle says it was
        // due (close_after past its period, at a pass of bill keeping) and as it was then, and its last adjustment,
        // or, without one, its value and n (an adjustment is recorded when those change), as the whole period.
        let expectedBills = expected["bills"] as! [[String: Any]]
        func key(_ item: [String: Any]) -> String {
            "\(item["series"]!) \(Self.int((item["period"] as! [Any])[0])!)"
        }
        let finals = Dictionary(expectedBills.map { (key($0), $0) }, uniquingKeysWith: { first, _ in first })
        func compareBill(_ bill: Bill, _ want: [String: Any], _ what: String, fully: Bool = true) {
            let period = (want["period"] as! [Any]).map { Self.int($0)! }
            check([bill.period.from, bill.period.to] == period, "period of \(what)")
            check(
                [bill.value, Int64(bill.intervals)] == [Self.int(want["value"]), Self.int(want["intervals"])],
                "value and n of \(what) (\(arrival)): store \([bill.value, Int64(bill.intervals)]) oracle \([want["value"]!, want["intervals"]!])"
            )
            guard fully else { return }
            check(
                Int64(bill.missing) == Self.int(want["missing"]),
                "missing intervals of \(what) (\(arrival)): store \(bill.missing) oracle \(want["missing"]!)")
            let classes = bill.classes
            check(
                [classes?.measured, classes?.interpolated, classes?.flagged].map { $0.map(Int64.init) }
                    == ["measured", "interpolated", "flagged"].map { Self.int(want[$0]) },
                "measured, interpolated and flagged intervals of \(what) (\(arrival))")
            check(
                [bill.inbound, bill.outbound, bill.sum] == [
                    Self.int(want["in"]), Self.int(want["out"]), Self.int(want["sum"]),
                ],
                "percentiles of \(what) (\(arrival))")
            check(
                bill.method.rawValue == want["method"] as? String && bill.rank.rawValue == want["rank_rule"] as? String,
                "method and rank of \(what): \(bill.method) \(bill.rank)")
        }
        for at in oracleCase.bills {
            for record in series {
                let line = try await engine.bill(record, containing: at, now: oracleCase.now)
                let what = "\(Self.name(record)) \(line.bill.period.from)"
                guard let final = finals[what] else {
                    differences.append("the oracle has no bill for \(what)")
                    continue
                }
                guard let issuedAt = line.issuedAt else {
                    compareBill(line.bill, final, "the open bill of \(what)")
                    continue
                }
                check(
                    issuedAt == Self.int(final["issued_at"]),
                    "\(what) issued at \(RFC3339.text(issuedAt)), due at \(String(describing: final["issued_at"]!))")
                if let asIssued = final["as_issued"] as? [String: Any] {
                    compareBill(line.bill, asIssued, "the bill of \(what) as issued")
                } else {
                    differences.append("the oracle has no bill of \(what) as issued")
                }
                if let adjustment = line.adjustments.last {
                    compareBill(adjustment.bill, final, "the last adjustment of \(what)")
                } else {
                    compareBill(line.bill, final, "the bill of \(what) with every batch", fully: false)
                }
            }
        }
        return differences
    }

    static func firstDifference(_ actual: [[Int64]], _ wanted: [[Int64]]) -> String {
        for (a, w) in zip(actual, wanted) where a != w { return "store \(a) oracle \(w)" }
        return "store has \(actual.count) buckets, oracle \(wanted.count)"
    }
}

struct OracleFailure: Error, CustomStringConvertible {
    var description: String
}

func temporaryDirectory() -> String {
    var template = Array("/tmp/netpulse-oracle-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
}
