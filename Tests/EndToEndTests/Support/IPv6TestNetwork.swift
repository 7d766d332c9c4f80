import Foundation

/// A network namespace with many IPv6 addresses of one /64 (`2001:db8:1::1` upwards), all local to it, for tests of
/// per-network limits; created by the test and removed by ``remove()``. The addresses sit on one end of a veth pair
/// inside the namespace: this kernel has no `dummy` driver (and no modprobe), and a veth end serves the same.
final class IPv6TestNetwork: @unchecked Sendable {
    let name: String
    /// `2001:db8:1::1`, `2001:db8:1::2` … in order.
    let addresses: [String]

    init(addresses count: Int) throws {
        name = "np-6-\(UUID().uuidString.prefix(6).lowercased())"
        addresses = (1...count).map { "2001:db8:1::\(String($0, radix: 16))" }
        try run(["ip", "netns", "add", name])
        do {
            try run(["ip", "-n", name, "link", "set", "lo", "up"])
            try run(["ip", "-n", name, "link", "add", "np6a", "type", "veth", "peer", "name", "np6b"])
            for device in ["np6a", "np6b"] { try run(["ip", "-n", name, "link", "set", device, "up"]) }
            // `nodad`: usable at once, without duplicate address detection's second or so.
            for address in addresses {
                try run(["ip", "-n", name, "-6", "addr", "add", "\(address)/64", "dev", "np6a", "nodad"])
            }
        } catch {
            remove()
            throw error
        }
    }

    /// Deletes the namespace (its interfaces go with it); safe to call more than once.
    func remove() {
        _ = try? run(["ip", "netns", "del", name], allowFailure: true)
    }

    deinit { remove() }
}
