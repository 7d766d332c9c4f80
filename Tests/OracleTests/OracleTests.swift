import Foundation
import PulseAgent
import PulseAnalytics
import PulseCore
import PulseDaemon
import PulseQuery
import PulseStore
import PulseStorePostgres
import PulseStoreSQLite
import TestSupport
import Testing

@testable import OracleSupport

/// Every figure checked against an independent reference: `Tests/Oracle/oracle.py`, written from docs/windows.md
/// alone, is fed the same generated counter sequences as the real store (SQLite, through the storage protocol and
/// the window engine), and every bucket of every level and scope, every window figure and every bill must be
/// equal. Each case is also fed to a second store in a random arrival order: late data moves bytes, never adds any.
@Suite(.serialized) struct OracleTests {
    @Test(.timeLimit(.minutes(5)))
    func anomaliesAgreeWithTheOracle() async throws {
        try await check(CaseGenerator.anomalies(seed: 11))
    }

    /// Times the daemon cannot place (a clock in 1970, one years ahead, a spool older than `max_age`, an outage
    /// longer than it): the unplaced totals agree with the oracle's, by series and day of receipt, and no bucket
    /// holds any of it. Each agent had unplaced steps, so the comparison is not of empty sets.
    @Test(.timeLimit(.minutes(5)))
    func timesThatCannotBePlacedAgreeWithTheOracle() async throws {
        let oracleCase = CaseGenerator.clocks(seed: 13)
        let expected = try Oracle.run(oracleCase)
        let unplaced = expected["unplaced"] as? [String: Any] ?? [:]
        for agent in ["rtc-0", "ahead-0", "old-0", "gone-0"] {
            #expect(unplaced["interface:\(agent)/eth0"] != nil, "\(agent) has no unplaced step")
        }
        #expect(unplaced["fleet"] != nil && unplaced["group:site=lab"] != nil)
        try await check(oracleCase)
        let store = try SQLiteStore(path: temporaryDirectory() + "/netpulse.db", settings: oracleCase.storeSettings())
        try await ingest(oracleCase, into: store)
        let buckets = try await store.buckets(
            level: .oneDay, series: try await store.series().map(\.id), from: .min, to: .max)
        // Nothing in 1970 nor three years ahead: every day bucket lies within the days the batches were received.
        let days = buckets.values.flatMap { $0.map(\.start) }
        let received = oracleCase.batches.map(\.received)
        #expect(!days.isEmpty)
        #expect(days.allSatisfy { (received.min()! - 86_400_000...received.max()!).contains($0) })
        #expect(try await store.totals().unplacedSteps > 0)
    }

    /// The worked examples 8, 9 and 10 of docs/windows.md (``CaseGenerator/countingRules()``): the oracle gives the
    /// figures the examples state, and the store agrees with it. Before, the store counted a 1.29 GB wrap for the
    /// reset at an unknown speed, a 95 MB wrap beside a reset of the same sample, and the 1.7 GB of several wraps
    /// with no event.
    @Test func wrapsResetsAndAmbiguityAgreeWithTheOracle() async throws {
        let oracleCase = CaseGenerator.countingRules()
        let expected = try Oracle.run(oracleCase)
        let buckets = expected["buckets"] as! [String: [String: [[Any]]]]
        /// (rx bytes, rx packets, events) of the interface's minute bucket at `minute`.
        func minute(_ interface: String, _ minute: Int64) -> (Int64, Int64, [Int64])? {
            let start = oracleCase.batches[0].sections[0].samples[0].time + minute * 60_000
            guard
                let row = buckets["interface:edge-32/\(interface)"]?["60000"]?.first(where: {
                    Oracle.int($0[0]) == start
                })
            else { return nil }
            let traffic = (row[1] as! [Any]).map { Oracle.int($0)! }
            return (traffic[0], traffic[2], (row[7] as! [Any]).map { Oracle.int($0)! })
        }
        // Events in the order of docs/windows.md's columns: epochs, wraps, resets, implausible, clock_steps, ambiguous.
        // Example 8: 1,000,000 + 5,000 (the least) + 1,000,000 bytes, no wrap; at an unknown speed (max_rate) every
        // step of a 32-bit counter is ambiguous, so all three are.
        let unknown = minute("unknown0", 0)
        #expect(unknown?.0 == 2_005_000 && unknown?.2 == [0, 0, 0, 0, 0, 3], "\(String(describing: unknown))")
        // Example 9: 1,000,000 + 50,000 + 1,000,000 bytes and 1,000 + 40 + 1,000 packets, one reset, no wrap.
        let wan0 = minute("wan0", 0)
        #expect(
            wan0?.0 == 2_050_000 && wan0?.1 == 2_040 && wan0?.2 == [0, 0, 1, 0, 0, 0], "\(String(describing: wan0))")
        // Example 10: the 60-second gap counts 1,705,032,704 bytes (spread over both minutes), ambiguous.
        let wan1 = [minute("wan1", 0), minute("wan1", 1)]
        #expect(
            wan1.reduce(0) { $0 + ($1?.0 ?? 0) } == 1_000_000 + 1_705_032_704 + 1_000_000
                && wan1.reduce(0) { $0 + ($1?.2[5] ?? 0) } == 1, "\(wan1)")
        try await check(oracleCase)
    }

    /// The worked examples 14, 15 and 16 of docs/windows.md (``CaseGenerator/kindsPeaksAndTheCurrentBucket()``):
    /// interfaces of unknown kind are not counted toward scopes, a step of 5 ms gives no peak, and the bucket holding
    /// `now` is a rate over the time its data covers. The oracle gives those figures and the store agrees. Before,
    /// the host counted `old0` too, `eth0`'s peak read 200 MB/s, and its last rate was over the 55 s since 10:00.
    @Test func kindsPeaksAndTheCurrentBucketAgreeWithTheOracle() async throws {
        let oracleCase = CaseGenerator.kindsPeaksAndTheCurrentBucket()
        let expected = try Oracle.run(oracleCase)
        let figures = Dictionary(
            uniqueKeysWithValues: (expected["figures"] as! [[String: Any]]).map { ($0["series"] as! String, $0) })
        func pair(_ series: String, _ name: String) -> [Int64?] {
            ((figures[series]?[name] as? [Any]) ?? []).map { Oracle.int($0) }
        }
        #expect(pair("host:kinds-0", "bytes") == pair("interface:kinds-0/eth0", "bytes"))
        #expect((pair("interface:kinds-0/old0", "bytes").first ?? 0) ?? 0 > 0)
        let peak = pair("interface:kinds-0/eth0", "peak").first ?? nil
        #expect(peak.map { $0 < 1_000_000_000 } == true, "peak \(String(describing: peak)) milli-bytes/s")
        let bucket = (expected["buckets"] as! [String: [String: [[Any]]]])["interface:kinds-0/eth0"]!["60000"]![0]
        let covered = Oracle.int(bucket[2])! + Oracle.int(bucket[3])!
        let rx = Oracle.int((bucket[1] as! [Any])[0])!
        #expect(covered == 50_000)
        #expect(pair("interface:kinds-0/eth0", "last").first == rx * 1_000_000 / covered)
        // In arrival order only: shuffled, the batch from the clock ahead would land inside the measured step it
        // was moved into, which docs/windows.md ("Late and out-of-order data") leaves as it was counted.
        try await check(oracleCase, shuffling: false)
    }

    /// The worked examples 18 and 19 of docs/windows.md (``CaseGenerator/epochStarts()``): the bytes a host counted
    /// since it booted after 15 days off land after its boot, and the 15 days are missing for its bill; a re-created
    /// interface's 5 GB land in the second before it was found, not in January and February. The oracle gives those
    /// figures and the store agrees. Before, the boot's 4 MB and the interface's 5 GB were one step each from the
    /// last sample before: longer than `max_age`, so unplaced (or, after a shorter outage, spread over all of it).
    @Test func aNewEpochsCountsBeginWithIt() async throws {
        let oracleCase = CaseGenerator.epochStarts()
        let expected = try Oracle.run(oracleCase)
        let buckets = expected["buckets"] as! [String: [String: [[Any]]]]
        /// (rx bytes, interpolated ms) of a series' 5-minute bucket starting at `start`.
        func bucket(_ series: String, _ start: Int64) -> (Int64, Int64)? {
            guard let row = buckets[series]?["300000"]?.first(where: { Oracle.int($0[0]) == start }) else { return nil }
            return (Oracle.int((row[1] as! [Any])[0])!, Oracle.int(row[3])!)
        }
        let booted: Int64 = 1_773_655_200_000 - 40_000
        let eth0 = bucket("interface:web-01/eth0", booted / 300_000 * 300_000)
        #expect(eth0?.0 == 4_000_000 && eth0?.1 == 40_000, "\(String(describing: eth0))")
        let found: Int64 = 1_772_697_600_000
        let veth7 = bucket("interface:lab-02/veth7", found)
        #expect(veth7.map { $0.0 >= 5_000_000_000 && $0.1 == 1_000 } == true, "\(String(describing: veth7))")
        // Nothing of the new epochs before they began, and nothing unplaced.
        let before = (buckets["interface:lab-02/veth7"]?["300000"] ?? []).filter { Oracle.int($0[0])! < found }
        #expect(before.map { Oracle.int(($0[1] as! [Any])[0])! }.reduce(0, +) == 10_000)
        #expect((expected["unplaced"] as! [String: Any]).values.allSatisfy { ($0 as! [String: Any]).isEmpty })
        // The March bill of eth0 misses the 15 days it was off (4,320 five-minute intervals) and more.
        let march = (expected["bills"] as! [[String: Any]]).first {
            $0["series"] as? String == "interface:web-01/eth0"
                && Oracle.int(($0["period"] as! [Any])[0])! > 1_772_000_000_000
        }
        #expect(march.map { Oracle.int($0["missing"])! >= 4_320 } == true)
        try await check(oracleCase)
    }

    /// The worked example 17 of docs/windows.md (``CaseGenerator/switchdev(kinds:)``, issue 30's event 11): the agent's
    /// own classifier reads a SmartNIC's sysfs as the test writes it (`p0` the uplink port and `pf0vf1` a virtual
    /// function's representor, both with a `device` link and one `phys_switch_id`), its kinds go into the batches, and
    /// the host counts p0's bytes alone: the VF's 2 GB crossed p0 too. Before, the classifier called both physical
    /// (each has a `device` link) and the host counted the VF's bytes twice.
    @Test func aSwitchdevRepresentorIsNotCountedBesideItsUplink() async throws {
        var template = Array("/tmp/netpulse-sysfs-XXXXXX".utf8CString)
        let root = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        for name in ["p0", "pf0vf1"] {
            try FileIO.createDirectory("\(root)/\(name)/device")
            for (file, text) in [("type", "1"), ("phys_switch_id", "4c2a3b0000ad"), ("phys_port_name", name)] {
                try FileIO.writeAtomically("\(root)/\(name)/\(file)", Array((text + "\n").utf8))
            }
        }
        let link = SysfsLink(root: root)
        let kinds = Dictionary(uniqueKeysWithValues: ["p0", "pf0vf1"].map { ($0, link.kind(InterfaceName($0))) })
        let oracleCase = CaseGenerator.switchdev(kinds: kinds)
        let expected = try Oracle.run(oracleCase)
        let figures = expected["figures"] as! [[String: Any]]
        func rx(_ series: String) -> Int64? {
            figures.first { $0["series"] as? String == series }.flatMap { Oracle.int(($0["bytes"] as! [Any])[0]) }
        }
        let uplink = try #require(rx("interface:nic-1/p0"))
        let minutes: Int64 = 59
        #expect(uplink == minutes * 50_000_000)
        #expect(rx("host:nic-1") == uplink, "\(kinds)")
        try await check(oracleCase)
    }

    /// The worked example 20 of docs/windows.md (``CaseGenerator/movedDuringAGap()``): a step that spans the moment
    /// its host moved from one group to another is divided between them by time, and each group's figures hold only
    /// the time the host was in it. The oracle gives that and the store agrees (in arrival order: shuffled, the move
    /// would come at another batch). Before, the whole four hours of eth0 went to the group of the step's end.
    @Test func aStepAcrossAMoveIsDividedBetweenTheGroups() async throws {
        let oracleCase = CaseGenerator.movedDuringAGap()
        let expected = try Oracle.run(oracleCase)
        let buckets = expected["buckets"] as! [String: [String: [[Any]]]]
        /// (start, rx bytes) of a series' minute buckets.
        func minutes(_ series: String) -> [(Int64, Int64)] {
            (buckets[series]?["60000"] ?? []).map { (Oracle.int($0[0])!, Oracle.int(($0[1] as! [Any])[0])!) }
        }
        let moved: Int64 = 1_781_085_600_000 + 2 * 3_600_000 + 9 * 60_000 + 2_000  // 12:09:02, the move
        let acme = minutes("group:site=acme")
        let globex = minutes("group:site=globex")
        let host = minutes("host:edge-7")
        #expect(!acme.isEmpty && !globex.isEmpty)
        #expect(acme.allSatisfy { $0.0 <= moved } && globex.allSatisfy { $0.0 + 60_000 > moved })
        // The two groups together hold the host's bytes exactly, and acme about half of eth0's four hours.
        let acmeBytes: Int64 = acme.map(\.1).reduce(0, +)
        let globexBytes: Int64 = globex.map(\.1).reduce(0, +)
        let hostBytes: Int64 = host.map(\.1).reduce(0, +)
        #expect(acmeBytes + globexBytes == hostBytes)
        #expect(acmeBytes > 1_000_000_000)
        try await check(oracleCase, shuffling: false)
    }

    /// The worked example 21 of docs/windows.md (``CaseGenerator/joinedABond()``): a host's past figures rest on the
    /// members its steps had. Last week eth0 and eth1 were two physical links of 1 Gbit/s: the host's figures of
    /// that week have 2 members and 2 Gbit/s, although eth1 is a bond slave today; today's rest on eth0 and bond0.
    /// Before, scopes took their members from today's kinds: last week's coverage read 200 % over eth0 alone and its
    /// utilisation doubled.
    @Test func pastScopeFiguresKeepTheMembersTheyHad() async throws {
        let oracleCase = CaseGenerator.joinedABond()
        let expected = try Oracle.run(oracleCase)
        let start: Int64 = 1_780_272_000_000
        let week: Int64 = 7 * 86_400_000
        let host = (expected["figures"] as! [[String: Any]]).filter { $0["series"] as? String == "host:db-3" }
        let lastWeek = host.first { Oracle.int(($0["window"] as! [Any])[0]) == start }!
        let today = host.first { Oracle.int(($0["window"] as! [Any])[0]) == start + week }!
        #expect(Oracle.int(lastWeek["members"]) == 2 && Oracle.int(today["members"]) == 2)
        // eth1's last step of the week ends in the bond's first batch, so it no longer counts for the host: the
        // week's two members are covered but for those five minutes of eth1.
        #expect(Oracle.int(lastWeek["coverage"]) == (2 * week - 300_000) * 1_000_000 / (2 * week))
        let average = Oracle.int((lastWeek["average"] as! [Any])[0])!
        #expect(Oracle.int((lastWeek["utilisation"] as! [Any])[0]) == average * 8 / (2_000 * 100_000))
        try await check(oracleCase)
    }

    /// The worked examples 11, 12 and 13 of docs/windows.md (``CaseGenerator/billingRules(strict:)``): a bill
    /// says how many of its intervals were measured, interpolated, missing and flagged, counts what its terms count,
    /// and takes its rank by its convention; an outage's intervals are missing while its bytes stay in the totals.
    /// The oracle gives those figures and the store agrees with it, with the bills kept as data arrives and
    /// computed from the buckets. Before, the outage's 24 intervals were 24 intervals of data and there were no
    /// classes, terms or rank conventions.
    @Test(.timeLimit(.minutes(5)))
    func whatABillRestsOnAgreesWithTheOracle() async throws {
        for strict in [false, true] {
            let oracleCase = CaseGenerator.billingRules(strict: strict)
            let expected = try Oracle.run(oracleCase)
            let bills = (expected["bills"] as! [[String: Any]]).filter {
                $0["series"] as? String == "interface:billed-0/eth0"
            }
            let counts = ["measured", "interpolated", "missing", "flagged", "intervals"].map {
                Oracle.int(bills[0][$0])
            }
            let counted: Int64 = strict ? 45 : 48
            #expect(counts == [46, 2, 24, 1, counted], "\(counts)")
            // The outage's bytes are in the six hours' total: every counted byte of the interface.
            let figures = (expected["figures"] as! [[String: Any]]).first {
                $0["series"] as? String == "interface:billed-0/eth0"
            }
            let last = oracleCase.batches.last!.sections[0].samples[0].counters[0]
            let first = oracleCase.batches[0].sections[0].samples[0].counters[0]
            #expect(Oracle.int((figures?["bytes"] as? [Any])?[0]) == Int64(last - first))
            try await check(oracleCase, keepingBills: true)
        }
    }

    /// Also keeps the bills in the store as the data arrives (the daemon's ``BillKeeper`` passes), so they are
    /// issued as their periods close and late data becomes adjustments: those must agree with the oracle too.
    @Test(.timeLimit(.minutes(5)))
    func billingPeriodsAgreeWithTheOracle() async throws {
        let oracleCase = CaseGenerator.billing(seed: 12)
        try await check(oracleCase, keepingBills: true) { passes, store in
            // Each batch's first step lands in an interval taken in before it arrived: swapped into the open bill,
            // not read again; the outage's gap steps and the late week are read again.
            #expect(passes.replaced > 100 && passes.rebuilt > 0, "\(passes)")
            // Periods closed while the data came in were issued; the late week became adjustments of March.
            let february = try await store.bills(series: nil, containing: oracleCase.bills[0])
            #expect(!february.isEmpty && february.allSatisfy { $0.issuedAt != nil })
            if let late = oracleCase.lateDataAt {
                #expect(!(try await store.billAdjustments(series: nil, containing: late)).isEmpty)
            }
        }
    }

    /// The same billing case in the PostgreSQL store (a throwaway server of the test's own), with the same bill
    /// passes: its rollups, window figures, bills and adjustments must agree with the oracle just as SQLite's do.
    @Test(.timeLimit(.minutes(5)))
    func billingPeriodsAgreeWithTheOracleOnPostgreSQL() async throws {
        let oracleCase = CaseGenerator.billing(seed: 12)
        let config = try oracleCase.daemonConfig()
        let server = try PostgresServer.start()
        defer { server.stop() }
        let store = try await PostgresStore(
            location: PostgresLocation(url: server.createDatabase("oracle")), settings: oracleCase.storeSettings(),
            idleTransactionTimeout: PostgresServer.idleTransactionLimit)
        defer { store.shutdown() }
        try await store.holdLease(holder: "test", ttl: 3_600_000)  // bills are the leader's to keep
        let keeper = BillKeeper(store: store, billing: config.billing, rules: config.store.rules)
        let clock = ContinuousClock.now
        let fed = try await ingest(oracleCase, into: store, keeper: keeper)
        print("ingest into PostgreSQL: \(ContinuousClock.now - clock)")
        #expect(fed.report.replaced > 100 && fed.report.rebuilt > 0, "\(fed.report)")
        let expected = try Oracle.run(oracleCase, passes: fed.passes, shared: true)
        let february = try await store.bills(series: nil, containing: oracleCase.bills[0])
        #expect(!february.isEmpty && february.allSatisfy { $0.issuedAt != nil })
        if let late = oracleCase.lateDataAt {
            #expect(!(try await store.billAdjustments(series: nil, containing: late)).isEmpty)
        }
        for difference in try await Oracle.compare(store, oracleCase, expected, arrival: "PostgreSQL") {
            Issue.record(Comment(rawValue: difference))
        }
        #expect(try await store.anomalies(since: 0).filter { $0.kind == "already-counted" }.isEmpty)
    }

    /// Compares the store with the oracle on `oracleCase`, as generated and (unless `shuffling` is false) shuffled.
    /// With `keepingBills`, the bills are also kept as the data arrives (as generated), issued bills are compared
    /// as they were issued, and `passes` is given what the passes did and the store.
    func check(
        _ oracleCase: OracleCase, shuffling: Bool = true, keepingBills: Bool = false,
        passes expectations: (BillKeeper.Report, any MetricStore) async throws -> Void = { _, _ in }
    ) async throws {
        var clock = ContinuousClock.now
        var shuffledCase = oracleCase
        var generator = SplitMix64(seed: 99)
        shuffledCase.batches.shuffle(using: &generator)
        let config = try oracleCase.daemonConfig()
        var expected: [String: Any]?
        for (name, arrival) in [("as generated", oracleCase), ("shuffled", shuffledCase)]
        where shuffling || name == "as generated" {
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let store = try SQLiteStore(path: directory + "/netpulse.db", settings: arrival.storeSettings())
            let keeper =
                keepingBills && name == "as generated"
                ? BillKeeper(store: store, billing: config.billing, rules: config.store.rules) : nil
            let fed = try await ingest(arrival, into: store, keeper: keeper)
            if keeper != nil { try await expectations(fed.report, store) }
            print("ingest \(name): \(ContinuousClock.now - clock)")
            clock = .now
            if expected == nil {
                expected = try Oracle.run(oracleCase, passes: fed.passes, shared: keepingBills)
                print("oracle: \(ContinuousClock.now - clock)")
                clock = .now
            }
            for difference in try await Oracle.compare(store, arrival, expected!, arrival: name) {
                Issue.record(Comment(rawValue: difference))
            }
            print("compare \(name): \(ContinuousClock.now - clock)")
            clock = .now
            #expect(try await store.anomalies(since: 0).filter { $0.kind == "already-counted" }.isEmpty, "\(name)")
        }
    }

    /// What feeding a case did: the keeper's passes added up, and when each ran with how many batches in.
    struct Fed {
        var report = BillKeeper.Report()
        var passes = [(now: Int64, batches: Int)]()
    }

    /// Feeds the batches in their arrival order, several per commit (up to 8) where they arrived at the same time,
    /// with a pass of `keeper` every five minutes of arrivals and one at the case's `now`.
    @discardableResult
    func ingest(_ oracleCase: OracleCase, into store: any MetricStore, keeper: BillKeeper? = nil) async throws -> Fed {
        var fed = Fed()
        var group = [IngestBatch]()
        var groupReceived: Int64 = 0
        var kept: Int64 = 0
        var count = 0
        func pass(_ now: Int64) async throws {
            guard let keeper else { return }
            let report = try await keeper.update(now: now)
            fed.report.intervals += report.intervals
            fed.report.replaced += report.replaced
            fed.report.rebuilt += report.rebuilt
            fed.passes.append((now, count))
        }
        for (batch, received) in try oracleCase.ingestBatches() {
            if !group.isEmpty && (received != groupReceived || group.count == 8) {
                #expect(try await store.ingest(group, receivedAt: groupReceived).allSatisfy { $0 == .stored })
                count += group.count
                group.removeAll()
                if groupReceived >= kept + 300_000 {
                    try await pass(groupReceived)
                    kept = groupReceived
                }
            }
            group.append(batch)
            groupReceived = received
        }
        if !group.isEmpty {
            _ = try await store.ingest(group, receivedAt: groupReceived)
            count += group.count
        }
        try await pass(oracleCase.now)
        return fed
    }
}
