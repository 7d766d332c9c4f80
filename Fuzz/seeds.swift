// Writes the seed corpus of the fuzz targets (Fuzz/corpus/): real frames, batches and config files, so that
// libFuzzer starts from inputs that reach deep into each decoder. Run by `scripts/fuzz.sh --seeds`; the output is
// committed.

@main
struct Seeds {
    static func write(_ path: String, _ bytes: [UInt8]) {
        do { try FileIO.writeAtomically(path, bytes) } catch { fatalError("\(error)") }
    }

    static func batch(sequence: UInt64, ticks: Int, busy: Bool) -> WireBatch {
        var counters = CounterValues()
        var values = [UInt64]()
        var generator = SplitMix64(seed: sequence)
        for _ in 0..<ticks {
            counters[.rxBytes] += busy ? generator.next() % 100_000 : 0
            counters[.txBytes] += busy ? generator.next() % 50_000 : 1
            counters[.rxPackets] += busy ? generator.next() % 900 : 0
            values += counters.values
        }
        return WireBatch(
            stream: 0xABCD, sequence: sequence, order: 1_763_856_000_000 + sequence, droppedBefore: sequence % 3,
            interval: 1_000, heartbeat: busy ? 0 : 60_000,
            timestamps: (0..<ticks).map { 1_763_856_000_000 + Int64($0) * 1_000 + Int64(generator.next() % 7) },
            sections: [
                BatchSection(descriptorID: 1, ticks: Array(0..<ticks), values: values),
                BatchSection(descriptorID: 2, ticks: [0, ticks - 1], values: CounterValues().values + counters.values),
            ],
            linkStates: [
                LinkStateRecord(
                    descriptorID: 1, tick: 0,
                    state: LinkState(speedMbps: 1_000, operState: .up, carrier: true, mtu: 1_500, kind: .physical))
            ])
    }

    static func main() {
        let root = CommandLine.arguments[1]
        let epoch = CounterEpoch(bootID: BootID(high: 1, low: 2), ifindex: 2, width: .bits64)
        let describe = Describe(
            stream: 0xABCD,
            interfaces: [
                InterfaceDescriptor(id: 1, name: InterfaceName("eth0"), epoch: epoch),
                InterfaceDescriptor(id: 2, name: InterfaceName("a<b&c"), epoch: epoch),
            ])
        // A connection as an agent opens it: HELLO, LABELS, DESCRIBE, batches coded against the references.
        var references: ReferenceTable? = ReferenceTable()
        var stream = WireCodec.encode(.hello(Hello(agentID: "web-01", hostname: "web-01", agentVersion: "0.3.0")))
        stream += WireCodec.encode(.labels(Labels([("site", "fra1"), ("role", "edge")])))
        stream += WireCodec.encode(.describe(describe))
        for sequence in 1...3 {
            stream += WireCodec.encode(
                .batch(batch(sequence: UInt64(sequence), ticks: 5, busy: true)), references: &references)
        }
        stream += WireCodec.encode(.keepalive)
        write("\(root)/frames/agent-connection", stream)
        // The daemon's side.
        write(
            "\(root)/frames/daemon-answers",
            WireCodec.encode(
                .welcome(Welcome(version: 2, daemonName: "netpulsed", capabilities: .all, limits: .standard)))
                + WireCodec.encode(.ack(Ack(stream: 0xABCD, sequence: 1, duplicate: false)))
                + WireCodec.encode(.pace(Pace(sampleFactor: 1, batchFactor: 4)))
                + WireCodec.encode(
                    .reject(Reject(stream: 0xABCD, sequence: 2, code: .invalidBatch, permanent: true, message: "order"))
                )
                + WireCodec.encode(.error(ErrorFrame(.shuttingDown, "the daemon is shutting down"))))
        for (name, batch) in [
            ("busy", batch(sequence: 1, ticks: 10, busy: true)), ("idle", batch(sequence: 2, ticks: 10, busy: false)),
            ("one-tick", batch(sequence: 3, ticks: 1, busy: true)),
        ] {
            write("\(root)/batch/\(name)", Array(WireCodec.encode(.batch(batch)).dropFirst(5)))
        }
    }
}
