import Foundation
import PulseAnalytics
import PulseCore
import PulseQuery
import SwiftProtobuf
import Testing

@testable import PulseDaemon
@testable import PulseStore
@testable import PulseStoreSQLite

#if canImport(Glibc)
    import Glibc
#endif

/// Remote write's passes against a real SQLite store: what they send equals what the store counted, late data
/// included, and the counter never goes down.
@Suite struct RemoteWritePassTests {
    let start: Int64 = 1_763_856_000_000  // 2025-11-23T00:00:00Z
    let agent = AgentIdentity(name: "web-01", hostname: "web-01", version: "test")

    /// Minute `minute` of eth0: sixty one-second samples of a counter that grows by 1,000 + 7·t bytes a second.
    func minute(_ minute: Int) -> IngestBatch {
        let values = (0..<60).flatMap { tick -> [UInt64] in
            let t = UInt64(minute * 60 + tick)
            var counters = CounterValues()
            counters[.rxBytes] = t * 1_000 + 7 * t * t / 2
            counters[.txBytes] = t * 300
            return counters.values
        }
        let wire = WireBatch(
            stream: 9, sequence: UInt64(minute + 1), order: UInt64(minute + 1), interval: 1_000, heartbeat: 0,
            timestamps: (0..<60).map { start + Int64(minute * 60 + $0) * 1_000 },
            sections: [BatchSection(descriptorID: 1, ticks: Array(0..<60), values: values)])
        let descriptor = InterfaceDescriptor(
            id: 1, name: "eth0", epoch: CounterEpoch(bootID: BootID(high: 1, low: 2), ifindex: 2, width: .bits64))
        return IngestBatch(agent: agent, batch: wire, descriptors: [descriptor])
    }

    /// The counter in a sample at `time` (the bytes counted from the first sample).
    func counted(at time: Int64) -> Double {
        let t = UInt64((time - start) / 1_000)
        return Double(t * 1_000 + 7 * t * t / 2)
    }

    /// One pass as the service makes it: raise the mark, read, "send", save.
    func pass(_ store: SQLiteStore, to: Int64) async throws -> RemoteWritePass {
        let catalogue = try await Catalogue.load(from: store, rules: ScopeRules())
        let cursor = try await store.withForwardSnapshot { $0.cursor }
        let from = cursor > 0 ? cursor : start
        try await store.raiseForwardMark(to: to)
        let pass = try await store.withForwardSnapshot { snapshot in
            try await RemoteWritePass(snapshot: snapshot, catalogue: catalogue, from: from, to: to)
        }
        try await store.saveForward(pass.update)
        return pass
    }

    func receiveCounter(_ pass: RemoteWritePass) -> [(timestamp: Int64, value: Double)] {
        pass.series.first { $0.labels["__name__"] == RemoteWritePass.counterNames.rx }?.samples ?? []
    }

    /// Minutes 4 and 5 arrive late (a spool replayed after the outage), after remote write has sent the buckets
    /// they belong in: the next pass's counter holds every byte, as if they had come in time.
    @Test func lateDataReachesTheNextSampleAndTheCounterNeverGoesDown() async throws {
        var template = Array("/tmp/netpulse-test-XXXXXX".utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        let store = try SQLiteStore(path: "\(directory)/netpulse.db")
        for minute in [0, 1, 2, 3, 6, 7] {
            _ = try await store.ingest([self.minute(minute)], receivedAt: start + 600_000)
        }
        // Minutes 0-7 forwarded; the outage (3:59 to 6:00) is a gap whose bytes are spread over it.
        let first = try await pass(store, to: start + 8 * 60_000)
        let before = receiveCounter(first)
        #expect(before.map(\.timestamp) == (1...8).map { start + Int64($0) * 60_000 })
        // The step into the first sample is not counted: the counter at a minute's end is the bytes since it.
        #expect(before.last?.value == counted(at: start + 7 * 60_000 + 59_000))
        #expect(zip(before, before.dropFirst()).allSatisfy { $1.value >= $0.value })

        // The replay, then minutes 8 and 9 in time.
        for minute in [4, 5, 8, 9] {
            _ = try await store.ingest([self.minute(minute)], receivedAt: start + 900_000)
        }
        // A pass with nothing new to send leaves the late changes for the next one.
        let changes = try await store.withForwardSnapshot { try await $0.changes(cursor: 0, limit: 100) }
        #expect(!changes.isEmpty)
        #expect(try await pass(store, to: start + 8 * 60_000).series.isEmpty)
        #expect(try await store.withForwardSnapshot { try await $0.changes(cursor: 0, limit: 100) } == changes)
        let second = try await pass(store, to: start + 10 * 60_000)
        let after = receiveCounter(second)
        #expect(after.map(\.timestamp) == [start + 9 * 60_000, start + 10 * 60_000])
        #expect(after.last?.value == counted(at: start + 9 * 60_000 + 59_000))
        #expect(after.first!.value >= before.last!.value)
        #expect(second.recounted == 1, "the gap went away, so eth0's bytes before the cursor were added up again")

        // Nothing left to settle, and a pass with nothing new sends nothing.
        #expect(try await store.withForwardSnapshot { try await $0.changes(cursor: 0, limit: 100) }.isEmpty)
        let third = try await pass(store, to: start + 10 * 60_000)
        #expect(third.series.isEmpty)
    }

    /// Turned off, remote write's state is cleared and late data is no longer recorded for it; turned on again,
    /// the counter is added up afresh and still exact.
    @Test func turnedOffItRecordsNothingAndStartsAfreshExactly() async throws {
        var template = Array("/tmp/netpulse-test-XXXXXX".utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        let store = try SQLiteStore(path: "\(directory)/netpulse.db")
        for minute in [0, 1, 2, 5] { _ = try await store.ingest([self.minute(minute)], receivedAt: start + 600_000) }
        _ = try await pass(store, to: start + 6 * 60_000)
        #expect(try store.stopForwarding())
        #expect(try !store.stopForwarding())
        for minute in [3, 4, 6] { _ = try await store.ingest([self.minute(minute)], receivedAt: start + 600_000) }
        #expect(try await store.withForwardSnapshot { try await $0.changes(cursor: 0, limit: 100) }.isEmpty)
        #expect(try await store.withForwardSnapshot { $0.cursor } == 0)
        let again = try await pass(store, to: start + 7 * 60_000)
        #expect(receiveCounter(again).last?.value == counted(at: start + 6 * 60_000 + 59_000))
    }

    /// An agent's labels are stored structurally: a value holding what once separated stored labels (a line break,
    /// `=`) comes back from the store as one label, and goes out through remote write as one. Before, `x` + newline +
    /// `team=ops` read back as a second label `team` and reached remote write and alert routing. (The protocol now
    /// refuses control characters in values, `Labels.isValidValue(_:)`: this is the store's own guarantee, under
    /// it.)
    @Test func aLabelWithALineBreakRoundTripsThroughTheStoreAndRemoteWriteAsOneLabel() async throws {
        var template = Array("/tmp/netpulse-test-XXXXXX".utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        let store = try SQLiteStore(path: "\(directory)/netpulse.db")
        let smuggling = Labels([("site", "x\nteam=ops"), ("note", "a=b,c=\"d\"")])
        for minute in [0, 1] {
            var batch = self.minute(minute)
            batch.agent.labels = smuggling
            _ = try await store.ingest([batch], receivedAt: start + 600_000)
        }
        let stored = try await store.agents().first { $0.name == "web-01" }
        #expect(stored?.labels == smuggling)
        let sent = try await pass(store, to: start + 2 * 60_000)
        let labels = sent.series.first { $0.labels["__name__"] == RemoteWritePass.counterNames.rx }?.labels ?? [:]
        #expect(labels["site"] == "x\nteam=ops" && labels["note"] == "a=b,c=\"d\"")
        #expect(labels["team"] == nil)
        // A store written before (labels as key=value lines) is still read.
        #expect(LabelText.decode("site=fra1\nrole=edge") == Labels([("site", "fra1"), ("role", "edge")]))
    }

    /// Requests never split a series, and stay under the limit unless one series alone is over it.
    @Test func requestsKeepEachSeriesWhole() {
        let series = (0..<5).map { index in
            RemoteSeries(labels: ["__name__": "s\(index)"], samples: (0..<3).map { (Int64($0), Double(index)) })
        }
        let pass = RemoteWritePass(series: series, update: ForwardUpdate(states: [], cursor: 0, settled: []))
        let requests = pass.requests(limit: 7)
        #expect(requests.map { $0.map(\.samples.count) } == [[3, 3], [3, 3], [3]])
        #expect(requests.flatMap { $0 } == series)
        #expect(pass.requests(limit: 2).count == 5)
    }

    /// A new receiver starts `backfill` back, and never with nothing (a backfill of 0 once meant no pass ever
    /// started); later passes start at the cursor.
    @Test func aPassStartsAtTheCursorOrAtLeastOneBucketBack() {
        let level = RollupLevel.oneMinute
        let present = start + 60 * 60_000
        #expect(RemoteWriteService.start(cursor: 0, present: present, backfill: 0, level: level) == present - 60_000)
        #expect(
            RemoteWriteService.start(cursor: 0, present: present, backfill: 600_000, level: level)
                == present - 600_000)
        #expect(RemoteWriteService.start(cursor: start, present: present, backfill: 0, level: level) == start)
    }

    @Test func agentLabelKeysBecomePrometheusLabelNames() {
        #expect(RemoteWritePass.labelName("site") == "site")
        #expect(RemoteWritePass.labelName("rack-id") == "rack_id")
        #expect(RemoteWritePass.labelName("9th") == "_9th")
        #expect(RemoteWritePass.labelName("__name__") == "_name__")
    }

    /// The request body decodes back (snappy, then the protobuf) to what was given, labels sorted by name.
    @Test func requestBodiesRoundTrip() throws {
        let series = [
            RemoteSeries(
                labels: ["interface": "a<b&c", "__name__": "x_total", "agent": "web-01"],
                samples: [(1_000, 1), (2_000, 2.5)])
        ]
        let body = try RemoteWriteClient.body(series)
        let decoded = try Prometheus_WriteRequest(serializedBytes: try #require(Snappy.uncompress(body)))
        #expect(decoded.timeseries.count == 1)
        #expect(decoded.timeseries[0].labels.map(\.name) == ["__name__", "agent", "interface"])
        #expect(decoded.timeseries[0].labels.map(\.value) == ["x_total", "web-01", "a<b&c"])
        #expect(decoded.timeseries[0].samples.map(\.timestamp) == [1_000, 2_000])
        #expect(decoded.timeseries[0].samples.map(\.value) == [1, 2.5])
        #expect(Snappy.uncompress([0xFF, 0xFF]) == nil)
    }
}
