import Foundation

/// Two network namespaces joined by a veth pair, created and destroyed by the test: `host` runs netpulsed and the
/// agent (with two more interfaces named `a<b&c` and `p"q>`, which Linux allows), `peer` sends traffic to it.
/// IPv6 is off in both so that no background packets move the counters while they are compared.
final class TestNetwork: @unchecked Sendable {
    let host: String
    let peer: String
    let hostAddress = "10.254.0.1"
    let peerAddress = "10.254.0.2"
    static let oddNames = ["a<b&c", "p\"q>"]

    init() throws {
        let suffix = UUID().uuidString.prefix(6).lowercased()
        host = "np-h-\(suffix)"
        peer = "np-p-\(suffix)"
        for namespace in [host, peer] {
            try run(["ip", "netns", "add", namespace])
            try run(["ip", "netns", "exec", namespace, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"])
            try run(["ip", "netns", "exec", namespace, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"])
            try run(["ip", "-n", namespace, "link", "set", "lo", "up"])
        }
        try run(["ip", "-n", host, "link", "add", "npv0", "type", "veth", "peer", "name", "npv1", "netns", peer])
        try run(["ip", "-n", host, "addr", "add", "\(hostAddress)/30", "dev", "npv0"])
        try run(["ip", "-n", peer, "addr", "add", "\(peerAddress)/30", "dev", "npv1"])
        try run(["ip", "-n", host, "link", "set", "npv0", "up"])
        try run(["ip", "-n", peer, "link", "set", "npv1", "up"])
        // This kernel has no dummy driver; a veth pair gives two idle interfaces just as well.
        try run(["ip", "-n", host, "link", "add", Self.oddNames[0], "type", "veth", "peer", "name", Self.oddNames[1]])
        for name in Self.oddNames { try run(["ip", "-n", host, "link", "set", name, "up"]) }
    }

    /// Deletes the veth pair and makes it again under the same names and addresses, as a VPN or container
    /// interface comes and goes: a new ifindex, and counters from zero.
    func recreateVeth() throws {
        try run(["ip", "-n", host, "link", "del", "npv0"])
        try run(["ip", "-n", host, "link", "add", "npv0", "type", "veth", "peer", "name", "npv1", "netns", peer])
        try run(["ip", "-n", host, "addr", "add", "\(hostAddress)/30", "dev", "npv0"])
        try run(["ip", "-n", peer, "addr", "add", "\(peerAddress)/30", "dev", "npv1"])
        try run(["ip", "-n", host, "link", "set", "npv0", "up"])
        try run(["ip", "-n", peer, "link", "set", "npv1", "up"])
    }

    /// Paces what the peer sends with a token bucket filter of `megabits` per second; returns the rate in bit/s.
    @discardableResult
    func limitRate(megabits: Int) throws -> Int {
        try run([
            "ip", "netns", "exec", peer, "tc", "qdisc", "replace", "dev", "npv1", "root", "tbf", "rate",
            "\(megabits)mbit",
            "burst", "32kbit", "latency", "400ms",
        ])
        return megabits * 1_000_000
    }

    /// Paces what the peer sends with a token bucket filter of `kilobits` per second (a thin uplink).
    func limitPeerRate(kilobits: Int) throws {
        try run([
            "ip", "netns", "exec", peer, "tc", "qdisc", "replace", "dev", "npv1", "root", "tbf", "rate",
            "\(kilobits)kbit", "burst", "16kbit", "latency", "400ms",
        ])
    }

    /// Drops `percent` % of the TCP packets that arrive on the veth pair, in both namespaces, at random: an nftables
    /// rule on input in each receiving namespace (dropping on output would fail the sender's syscall instead).
    func dropPackets(percent: Int) throws {
        for (namespace, interface) in [(host, "npv0"), (peer, "npv1")] {
            let rules = """
                table inet lossy {
                    chain input {
                        type filter hook input priority 0; policy accept;
                        iifname "\(interface)" meta l4proto tcp numgen random mod 100 < \(percent) counter drop
                    }
                }
                """
            let file = NSTemporaryDirectory() + "lossy-\(namespace).nft"
            try rules.write(toFile: file, atomically: true, encoding: .utf8)
            try run(["ip", "netns", "exec", namespace, "nft", "-f", file])
        }
    }

    /// Packets the loss rules dropped so far, in both namespaces.
    func droppedPackets() throws -> Int {
        try [host, peer].reduce(0) { total, namespace in
            let text = try run(["ip", "netns", "exec", namespace, "nft", "list", "table", "inet", "lossy"])
            let packets = text.components(separatedBy: "counter packets ").dropFirst().compactMap {
                Int($0.prefix { $0.isNumber })
            }
            return total + packets.reduce(0, +)
        }
    }

    /// Bytes the peer has sent on its end of the veth pair (what crossed the link towards the host).
    func peerSentBytes() throws -> UInt64 {
        guard let npv1 = try kernelCounters(in: peer)["npv1"] else {
            throw CommandFailure(description: "npv1 not in the peer's /proc/net/dev")
        }
        return npv1[8]
    }

    func removeRateLimit() {
        _ = try? run(["ip", "netns", "exec", peer, "tc", "qdisc", "del", "dev", "npv1", "root"], allowFailure: true)
    }

    /// Sends `bytes` over TCP from the peer namespace to the host namespace, running `meanwhile` while they flow.
    func sendTraffic(bytes: Int, meanwhile: () throws -> Void = {}) throws {
        let sink = Process()
        sink.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        sink.arguments = [
            "netns", "exec", host, "python3", "-c",
            "import socket\ns=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('\(hostAddress)', 9100)); s.listen(1); c,_=s.accept()\nwhile c.recv(65536): pass",
        ]
        try sink.run()
        defer { if sink.isRunning { sink.terminate() } }
        try eventually("the sink listens") {
            try run(["ip", "netns", "exec", host, "ss", "-ltnH", "sport = :9100"]).contains("9100")
        }
        let source = Process()
        source.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        source.arguments = [
            "netns", "exec", peer, "python3", "-c",
            "import socket\nc=socket.create_connection(('\(hostAddress)', 9100)); c.sendall(b'x' * \(bytes)); c.close()",
        ]
        try source.run()
        defer { if source.isRunning { source.terminate() } }
        try meanwhile()
        source.waitUntilExit()
        sink.waitUntilExit()
    }

    /// The kernel's counters in a namespace (the host's unless another is named), parsed independently of the
    /// agent's parser.
    func kernelCounters(in namespace: String? = nil) throws -> [String: [UInt64]] {
        let text = try run(["ip", "netns", "exec", namespace ?? host, "cat", "/proc/net/dev"])
        var result = [String: [UInt64]]()
        for line in text.split(separator: "\n").dropFirst(2) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces)
            result[name] = line[line.index(after: colon)...].split(separator: " ").compactMap { UInt64($0) }
        }
        return result
    }

    deinit {
        _ = try? run(["ip", "netns", "del", host], allowFailure: true)
        _ = try? run(["ip", "netns", "del", peer], allowFailure: true)
    }
}
