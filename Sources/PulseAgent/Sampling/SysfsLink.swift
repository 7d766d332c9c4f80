import PulseCore

/// Reads an interface's slow-changing facts from `/sys/class/net/IF/`.
public struct SysfsLink: Sendable {
    public var root: String

    public init(root: String = "/sys/class/net") {
        self.root = root
    }

    private func path(_ name: InterfaceName, _ attribute: String) -> String {
        "\(root)/\(name.description)/\(attribute)"
    }

    private func read(_ name: InterfaceName, _ attribute: String) -> String? {
        // A name that is not UTF-8 cannot be spelt as a Swift path string; such interfaces get no link facts.
        guard String(validating: name.bytes, as: UTF8.self) != nil else { return nil }
        return try? FileIO.readString(path(name, attribute)).trimmingWhitespace()
    }

    /// The interface index, or `nil` when the interface is gone.
    public func ifindex(_ name: InterfaceName) -> UInt32? {
        read(name, "ifindex").flatMap { UInt32($0) }
    }

    /// Speed, operstate, carrier and MTU. Reading `speed` or `carrier` of a down link fails with EINVAL; that is
    /// reported as unknown, not as an error.
    public func state(_ name: InterfaceName) -> LinkState {
        let speed = read(name, "speed").flatMap { Int64($0) }.flatMap {
            $0 > 0 && $0 < Int64(UInt32.max) ? UInt32($0) : nil
        }
        let operState = read(name, "operstate").map { OperState(sysfs: $0) } ?? .unknown
        let carrier = read(name, "carrier").flatMap { Int($0) }.map { $0 == 1 }
        let mtu = read(name, "mtu").flatMap { UInt32($0) } ?? 0
        let (kind, relation) = kind(name)
        return LinkState(
            speedMbps: speed, operState: operState, carrier: carrier, mtu: mtu, kind: kind, relation: relation)
    }

    /// What kind of interface `name` is, and whether it is a bond slave or bridge port, from its sysfs entries
    /// (the same facts `ip -d link` shows): so that host totals count each byte once (`docs/windows.md`).
    public func kind(_ name: InterfaceName) -> (InterfaceKind, InterfaceRelation) {
        guard String(validating: name.bytes, as: UTF8.self) != nil else { return (.unknown, []) }
        var relation = InterfaceRelation()
        if exists(name, "bonding_slave") { relation.insert(.bondSlave) }
        if exists(name, "brport") { relation.insert(.bridgePort) }
        let type = read(name, "type").flatMap { Int($0) }
        let deviceType = read(name, "uevent").flatMap { uevent in
            uevent.split(separator: "\n").first { $0.hasPrefix("DEVTYPE=") }.map { String($0.dropFirst(8)) }
        }
        let kind: InterfaceKind
        if type == 772 {
            kind = .loopback
        } else if exists(name, "bonding") || deviceType == "bond" {
            kind = .bond
        } else if exists(name, "bridge") || deviceType == "bridge" {
            kind = .bridge
        } else if deviceType == "vlan" {
            kind = .vlan
        } else if let type, Self.tunnelTypes.contains(type) || deviceType == "wireguard" {
            kind = .tunnel
        } else if Self.isRepresentor(switchID: read(name, "phys_switch_id"), portName: read(name, "phys_port_name")) {
            // It has a `device` link too, but its traffic also crosses the uplink (`p0`), the physical port.
            kind = .virtual
        } else if exists(name, "device") {
            kind = .physical
        } else if deviceType == nil, type == 1, let ifindex = ifindex(name),
            let peer = read(name, "iflink").flatMap({ UInt32($0) }), peer != ifindex, peer != 0
        {
            // A virtual Ethernet device linked to another interface and with no device type of its own: a veth.
            kind = .veth
        } else {
            kind = .virtual
        }
        return (kind, relation)
    }

    /// Whether an interface is a switchdev representor of a PCI, virtual or sub-function (`phys_port_name` `pf0`,
    /// `pf0vf1`, `pf0sf3`, `c1pf0vf2`) rather than a physical port of the switch (`p0`, `p0s1`): `docs/protocol.md`.
    static func isRepresentor(switchID: String?, portName: String?) -> Bool {
        guard let switchID, !switchID.isEmpty, let portName else { return false }
        let controller = portName.first == "c" ? portName.drop { $0 != "p" } : Substring(portName)
        return controller.hasPrefix("pf")
    }

    /// ARPHRD types of tunnels (linux/if_arp.h): ipip, ip6ip6, sit, gre, ip6gre, and none (tun, WireGuard).
    static let tunnelTypes: Set<Int> = [768, 769, 776, 778, 823, 65_534]

    private func exists(_ name: InterfaceName, _ attribute: String) -> Bool {
        FileIO.exists(path(name, attribute))
    }

    /// This boot's id from `/proc/sys/kernel/random/boot_id`.
    public static func bootID(path: String = "/proc/sys/kernel/random/boot_id") throws -> BootID {
        let text = try FileIO.readString(path)
        guard let id = BootID(uuidString: text) else {
            throw FileIO.Failure(operation: "parse boot id", path: path, errno: 22)
        }
        return id
    }
}
