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
        return LinkState(speedMbps: speed, operState: operState, carrier: carrier, mtu: mtu)
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
