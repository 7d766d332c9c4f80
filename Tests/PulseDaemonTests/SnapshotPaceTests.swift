import Foundation
import Logging
import PulseCore
import Synchronization
import Testing

@testable import PulseDaemon
@testable import PulseSettings
@testable import PulseStoreSQLite

/// The snapshot gives way to the reads someone waits for (``InteractiveReads``): its reads go in parts and wait
/// before each while a live page or the API reads, within a budget per snapshot, and what it writes is the same.
@Suite struct SnapshotPaceTests {
    @Test func anInteractiveReadKeepsBackgroundWorkWaitingUntilShortlyAfterItEnds() async throws {
        let interactive = InteractiveReads()
        #expect(!interactive.busy)
        let inside = try await interactive.during { interactive.busy }
        #expect(inside)
        #expect(interactive.busy, "just ended: the rest of its wave may follow")
        try await Task.sleep(for: InteractiveReads.afterglow + .milliseconds(50))
        #expect(!interactive.busy)
        // A read that fails ends all the same.
        await #expect(throws: CancellationError.self) {
            _ = try await interactive.during { () async throws -> Int in throw CancellationError() }
        }
        try await Task.sleep(for: InteractiveReads.afterglow + .milliseconds(50))
        #expect(!interactive.busy)
    }

    @Test func aSnapshotWaitsWhileAskedWithinItsBudgetAndWritesTheSameFiles() async throws {
        let directory =
            NSTemporaryDirectory() + "netpulse-snapshot-pace-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = try DaemonConfig.parse(
            ConfigDocument(text: "[daemon]\nstate_directory = \"\(directory)\"\n", file: "netpulsed.toml"))
        let store = try SQLiteStore(path: config.storePath, settings: config.store)
        try FileIO.createDirectory(config.snapshots.directory)  // as the service does when it starts
        let fleet = AlertRoundTests()
        for minute in 0..<8 {
            _ = try await store.ingest(
                fleet.interfaces.map { fleet.batch($0, minute: minute) }, receivedAt: fleet.day + 3_600_000)
        }
        let now = fleet.day + 600_000
        func service(_ giveWay: @escaping @Sendable () -> Bool) -> SnapshotService {
            SnapshotService(
                store: store, config: config, clock: .system, logger: Logger(label: "test"), giveWay: giveWay)
        }
        func written() throws -> String {
            try String(contentsOfFile: "\(config.snapshots.directory)/latest.json", encoding: .utf8)
        }

        let alone = try await service { false }.write(at: now)
        #expect(alone.waited == .zero)
        let unhindered = try written()
        #expect(unhindered.contains("\"web-01\""))

        // A page reads during the first checks: the snapshot's reads wait for it, then go on.
        let checks = Atomic<Int>(0)
        let pageReading = try await service { checks.add(1, ordering: .relaxed).newValue <= 5 }.write(at: now)
        #expect(pageReading.waited >= .milliseconds(100), "five checks 20 ms apart")
        #expect(checks.load(ordering: .relaxed) > 5, "asked again before later parts")
        #expect(try written() == unhindered)

        // Pages that never stop reading: it waits its budget in all, no more, and is made.
        var busy = service { true }
        busy.longestWait = .milliseconds(300)
        let began = ContinuousClock.now
        let late = try await busy.write(at: now)
        #expect(late.waited >= .milliseconds(300) && late.waited < .seconds(2))
        #expect(ContinuousClock.now - began < .seconds(30))
        #expect(try written() == unhindered)
        #expect(alone.files == late.files)
    }
}
