import Foundation
import PulseCore
import Testing

@testable import PulseAgent

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct ProcNetDevTests {
    static let sample = """
        Inter-|   Receive                                                |  Transmit
         face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
            lo:  123456     789    0    0    0     0          0         0   123456     789    0    0    0     0       0          0
          eth0: 18446744073709551615 42 1 2 3 4 5 6 9876543210 43 7 8 9 10 11 12
         a<b&c:       1       2    3    4    5     6          7         8        9       10   11   12   13    14      15         16
          p"q>: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
        veryveryverylongname: 5 4 3 2 1 0 0 0 0 0 0 0 0 0 0 1

        """

    @Test func parsesEveryCounterAndOddNames() throws {
        let rows = try ProcNetDev.parse(Array(Self.sample.utf8))
        #expect(rows.map(\.name.description) == ["lo", "eth0", "a<b&c", "p\"q>", "veryveryverylongname"])
        #expect(rows[1].counters[.rxBytes] == UInt64.max)
        #expect(rows[1].counters[.txBytes] == 9_876_543_210)
        #expect(rows[1].counters[.txCompressed] == 12)
        #expect(rows[2].counters.values == Array(1...16).map(UInt64.init))
        #expect(rows[3].counters == CounterValues())
    }

    @Test func rejectsShortAndOverflowingLines() {
        let short = "h1\nh2\n eth0: 1 2 3\n"
        #expect(throws: ProcNetDev.ParseError.self) { try ProcNetDev.parse(Array(short.utf8)) }
        let overflow = "h1\nh2\n eth0: 18446744073709551616 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
        #expect(throws: ProcNetDev.ParseError.self) { try ProcNetDev.parse(Array(overflow.utf8)) }
        let noName = "h1\nh2\n 1 2 3\n"
        #expect(throws: ProcNetDev.ParseError.self) { try ProcNetDev.parse(Array(noName.utf8)) }
    }

    @Test func parsesThisMachine() throws {
        let rows = try ProcNetDev.parse(try FileIO.readBytes(ProcNetDev.path))
        #expect(rows.contains { $0.name == "lo" })
    }

    @Test func samplerAttachesEpochsAndFilters() throws {
        var sampler = Sampler(
            filter: InterfaceFilter(include: ["*"], exclude: []), bootID: try SysfsLink.bootID())
        let tick = try sampler.sample(at: 1_000, readLinkState: true)
        let loopback = try #require(tick.interfaces.first { $0.name == "lo" })
        #expect(loopback.epoch.ifindex == 1)
        #expect(loopback.linkState?.mtu == 65_536)
        #expect(loopback.epoch.width == .bits64)
    }
}

/// When each epoch began, as the agent says in `DESCRIBE_EPOCHS` (docs/protocol.md, "Interface descriptors"), from a
/// `/proc/net/dev`, `/proc/stat` and sysfs tree the test writes.
@Suite struct EpochStartTests {
    @Test func epochsBeginAtTheBootOrAfterTheReadBefore() throws {
        var template = Array("/tmp/netpulse-proc-XXXXXX".utf8CString)
        let root = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        defer { _ = try? FileManager.default.removeItem(atPath: root) }
        try FileIO.createDirectory("\(root)/sys")
        try FileIO.writeAtomically("\(root)/stat", Array("cpu  1 2 3 4\nbtime 1773655160\nprocesses 9\n".utf8))
        func write(_ rows: [(String, UInt64, UInt32)]) throws {
            var text = "Inter-|   Receive\n face |bytes\n"
            for (name, bytes, ifindex) in rows {
                text += " \(name): \(bytes) 1 0 0 0 0 0 0 \(bytes) 1 0 0 0 0 0 0\n"
                if !FileManager.default.fileExists(atPath: "\(root)/sys/\(name)") {
                    try FileIO.createDirectory("\(root)/sys/\(name)")
                }
                try FileIO.writeAtomically("\(root)/sys/\(name)/ifindex", Array("\(ifindex)\n".utf8))
            }
            try FileIO.writeAtomically("\(root)/dev", Array(text.utf8))
        }
        var sampler = Sampler(
            filter: InterfaceFilter(include: ["*"], exclude: []), bootID: BootID(high: 1, low: 1),
            procPath: "\(root)/dev", statPath: "\(root)/stat", sysfs: SysfsLink(root: "\(root)/sys"))
        func began(_ tick: TickSample) -> [String: Int64?] {
            Dictionary(uniqueKeysWithValues: tick.interfaces.map { ($0.name.description, $0.began) })
        }
        let boot: Int64 = 1_773_655_160_000
        // Found at the first read: began no earlier than the boot.
        try write([("eth0", 1_000, 2)])
        #expect(began(try sampler.sample(at: boot + 40_000, readLinkState: false)) == ["eth0": boot])
        // veth7 appears: after the read before.
        try write([("eth0", 2_000, 2), ("veth7", 5_000_000_000, 9)])
        let appeared = try sampler.sample(at: boot + 41_000, readLinkState: false)
        #expect(began(appeared) == ["eth0": boot, "veth7": boot + 40_000])
        try write([("eth0", 3_000, 2), ("veth7", 5_000_001_000, 9)])
        let kept = try sampler.sample(at: boot + 42_000, readLinkState: false)
        #expect(began(kept) == ["eth0": boot, "veth7": boot + 40_000])
        // veth7 re-created (its counters went down, a new ifindex): after the read before.
        try write([("eth0", 4_000, 2), ("veth7", 10, 12)])
        let recreated = try sampler.sample(at: boot + 43_000, readLinkState: false)
        #expect(began(recreated) == ["eth0": boot, "veth7": boot + 42_000])
        #expect(recreated.interfaces.first { $0.name == "veth7" }?.epoch.ifindex == 12)
        // Without a boot time to read, a first read knows no start.
        var blind = Sampler(
            filter: InterfaceFilter(include: ["*"], exclude: []), bootID: BootID(high: 1, low: 1),
            procPath: "\(root)/dev", statPath: "\(root)/missing", sysfs: SysfsLink(root: "\(root)/sys"))
        #expect(began(try blind.sample(at: boot + 44_000, readLinkState: false)) == ["eth0": nil, "veth7": nil])
    }
}

@Suite struct InterfaceFilterTests {
    @Test func globsIncludeAndExclude() {
        let filter = InterfaceFilter(include: ["eth*", "wl?0", "a<b&c"], exclude: ["eth9"])
        #expect(filter.accepts("eth0"))
        #expect(!filter.accepts("eth9"))
        #expect(filter.accepts("wlp0"))
        #expect(!filter.accepts("wlan0"))
        #expect(filter.accepts("a<b&c"))
        #expect(!InterfaceFilter.standard.accepts("lo"))
        #expect(InterfaceFilter.standard.accepts("p\"q>"))
    }
}

/// Interface kinds from a sysfs tree the test makes, as `/sys/class/net` shows them.
@Suite struct SysfsKindTests {
    /// docs/windows.md, worked example 17: a switchdev representor of a virtual function or sub-function has a
    /// `device` link like the uplink port, but its traffic also crosses the uplink: it is virtual, the uplink
    /// physical, so a host counts the VF's bytes once. A NIC without switchdev stays physical.
    @Test func switchdevRepresentorsAreVirtualAndTheirUplinkPhysical() throws {
        var template = Array("/tmp/netpulse-sysfs-XXXXXX".utf8CString)
        let root = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        func make(_ name: String, _ files: [String: String]) throws {
            try FileIO.createDirectory("\(root)/\(name)/device")
            try FileIO.writeAtomically("\(root)/\(name)/type", Array("1\n".utf8))
            for (file, text) in files { try FileIO.writeAtomically("\(root)/\(name)/\(file)", Array((text + "\n").utf8)) }
        }
        try make("p0", ["phys_switch_id": "4c2a3b0000ad", "phys_port_name": "p0"])
        try make("p0s1", ["phys_switch_id": "4c2a3b0000ad", "phys_port_name": "p0s1"])
        try make("pf0vf1", ["phys_switch_id": "4c2a3b0000ad", "phys_port_name": "pf0vf1"])
        try make("pf0sf3", ["phys_switch_id": "4c2a3b0000ad", "phys_port_name": "pf0sf3"])
        try make("pf0hpf", ["phys_switch_id": "4c2a3b0000ad", "phys_port_name": "pf0"])
        try make("c1vf2", ["phys_switch_id": "4c2a3b0000ad", "phys_port_name": "c1pf0vf2"])
        try make("eth0", [:])
        let link = SysfsLink(root: root)
        let kinds = ["p0", "p0s1", "pf0vf1", "pf0sf3", "pf0hpf", "c1vf2", "eth0"].map {
            link.kind(InterfaceName($0)).0
        }
        #expect(kinds == [.physical, .physical, .virtual, .virtual, .virtual, .virtual, .physical])
    }
}
