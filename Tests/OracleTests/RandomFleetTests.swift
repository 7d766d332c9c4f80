import Foundation
import PulseAnalytics
import PulseCore
import PulseDaemon
import PulseQuery
import PulseStore
import PulseStoreSQLite
import Testing

@testable import OracleSupport

extension OracleTests {
    /// Many small random fleets (``CaseGenerator/randomFleet(seed:)``), each with its own configuration, fed to a
    /// fresh store and to the oracle: every bucket, window figure, unplaced total and bill must agree. A quarter of
    /// them keep their bills as the data arrives (issued bills compared as issued). The run's first seed is printed;
    /// a failing fleet prints its seed and a smaller case that still fails, written where the oracle can be run on
    /// it by hand. `NETPULSE_ORACLE_FLEETS` sets how many (200), `NETPULSE_ORACLE_SEED` the first seed.
    @Test(.timeLimit(.minutes(10)))
    func randomFleetsAgreeWithTheOracle() async throws {
        let environment = ProcessInfo.processInfo.environment
        let count = Int(environment["NETPULSE_ORACLE_FLEETS"] ?? "") ?? 200
        let first = UInt64(environment["NETPULSE_ORACLE_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64(Int32.max))
        print("random fleets: \(count) from seed \(first) (NETPULSE_ORACLE_SEED=\(first) repeats them)")
        let clock = ContinuousClock.now
        var spent = Spent()
        var failures = 0
        let verbose = environment["NETPULSE_ORACLE_VERBOSE"] != nil
        for seed in first..<first + UInt64(count) {
            if verbose { print("random fleet \(seed)") }
            let oracleCase = CaseGenerator.randomFleet(seed: seed)
            let keeping = seed % 4 == 0
            let differences = try await disagreements(oracleCase, keepingBills: keeping, spent: &spent)
            guard !differences.isEmpty else { continue }
            failures += 1
            // Said at once, so the seed is known even if shrinking runs out of time.
            print("random fleet \(seed) disagrees with the oracle: \(differences.prefix(3).joined(separator: "; "))")
            let deadline = ContinuousClock.now + .seconds(90)
            let smaller = await CaseGenerator.shrink(oracleCase) { candidate in
                guard ContinuousClock.now < deadline else { return false }
                return (try? await disagreements(candidate, keepingBills: keeping).isEmpty == false) ?? false
            }
            let file = temporaryDirectory() + "/fleet-\(seed).json"
            try smaller.json().write(toFile: file, atomically: true, encoding: .utf8)
            Issue.record(
                """
                random fleet \(seed) (NETPULSE_ORACLE_SEED=\(seed) NETPULSE_ORACLE_FLEETS=1) disagrees with the oracle; \
                a smaller case that still does (\(smaller.batches.count) of \(oracleCase.batches.count) batches, agents \
                \(Set(smaller.batches.map(\.agent)).sorted()), interfaces \(Set(smaller.batches.flatMap { $0.sections.map(\.name) }).sorted())) \
                is in \(file) (python3 Tests/Oracle/oracle.py < \(file)); first differences:
                \(try await disagreements(smaller, keepingBills: keeping).prefix(5).joined(separator: "\n"))
                """)
            if failures == 3 { break }
        }
        print(
            "random fleets: \(count) in \(ContinuousClock.now - clock) (store \(spent.store), oracle \(spent.oracle), comparing \(spent.comparing))"
        )
    }

    /// Where the time of the random fleets goes.
    struct Spent {
        var store = Duration.zero
        var oracle = Duration.zero
        var comparing = Duration.zero
    }

    /// How `oracleCase` fed to a fresh store disagrees with the oracle, in words (empty when it agrees).
    func disagreements(_ oracleCase: OracleCase, keepingBills: Bool) async throws -> [String] {
        var spent = Spent()
        return try await disagreements(oracleCase, keepingBills: keepingBills, spent: &spent)
    }

    /// ``disagreements(_:keepingBills:)``, adding the time each part took to `spent`.
    func disagreements(_ oracleCase: OracleCase, keepingBills: Bool, spent: inout Spent) async throws -> [String] {
        var clock = ContinuousClock.now
        func lap(_ into: WritableKeyPath<Spent, Duration>) {
            spent[keyPath: into] += ContinuousClock.now - clock
            clock = .now
        }
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = try oracleCase.daemonConfig()
        let store = try SQLiteStore(path: directory + "/netpulse.db", settings: oracleCase.storeSettings())
        let keeper = keepingBills ? BillKeeper(store: store, billing: config.billing, rules: config.store.rules) : nil
        let fed = try await ingest(oracleCase, into: store, keeper: keeper)
        lap(\.store)
        let expected = try Oracle.run(oracleCase, passes: fed.passes)
        lap(\.oracle)
        var differences = try await Oracle.compare(store, oracleCase, expected, arrival: "random")
        lap(\.comparing)
        let inside = try await store.anomalies(since: 0).filter { $0.kind == "already-counted" }
        if !inside.isEmpty { differences.append("late data landed inside a counted step: \(inside[0].detail)") }
        return differences
    }
}
