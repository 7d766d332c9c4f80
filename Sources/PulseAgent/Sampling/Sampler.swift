import PulseCore

/// One interface at one tick.
public struct InterfaceSample: Sendable, Hashable {
    public var name: InterfaceName
    public var epoch: CounterEpoch
    public var counters: CounterValues
    /// Set on ticks where link facts were read (see ``Sampler/sample(at:readLinkState:)``).
    public var linkState: LinkState?
    /// When the epoch began at the earliest (ms since the Unix epoch), when known: see ``Sampler``.
    public var began: Int64? = nil
}

/// All sampled interfaces at one tick.
public struct TickSample: Sendable, Hashable {
    /// Milliseconds since the Unix epoch when the counters were read.
    public var timestamp: Int64
    public var interfaces: [InterfaceSample]
}

/// Reads the counters of every accepted interface, and their epochs.
///
/// `ifindex` comes from sysfs, which costs a file read per interface, so it is read when a name first appears,
/// when any of its counters goes down (the interface may have been re-created), and whenever link facts are read.
/// Link facts are read every `link_state_interval`, and at once for an interface that appears.
///
/// Each epoch says when it began at the earliest, so that the daemon never places what its counters counted before
/// that (`docs/windows.md`): an interface found at the first read began no earlier than the kernel booted (`btime`
/// in `/proc/stat`, read then, so in the same clock as the first sample), one that appears later, or comes back
/// with a new ifindex, no earlier than the read before the one that found it.
public struct Sampler: Sendable {
    public var filter: InterfaceFilter
    public let bootID: BootID
    public let width: CounterWidth
    public let procPath: String
    public let statPath: String
    public let sysfs: SysfsLink
    private var known: [InterfaceName: (ifindex: UInt32, counters: CounterValues, began: Int64?)] = [:]
    /// The previous read's timestamp; nil before the first.
    private var previousTimestamp: Int64?
    /// Interfaces left out because the protocol refuses their names (``InterfaceName/violation``), and those of
    /// them not yet handed out by ``takeRefused()``.
    private var refused = Set<InterfaceName>()
    private var unreported = [(name: InterfaceName, why: String)]()

    public init(
        filter: InterfaceFilter, bootID: BootID, width: CounterWidth = .native,
        procPath: String = ProcNetDev.path, statPath: String = Sampler.statPath, sysfs: SysfsLink = SysfsLink()
    ) {
        self.filter = filter
        self.bootID = bootID
        self.width = width
        self.procPath = procPath
        self.statPath = statPath
        self.sysfs = sysfs
    }

    public static let statPath = "/proc/stat"

    /// The kernel's boot time from `/proc/stat` (`btime`, whole seconds) in milliseconds, or nil when it cannot be
    /// read.
    public static func bootTime(statPath: String = statPath) -> Int64? {
        guard let bytes = try? FileIO.readBytes(statPath) else { return nil }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("btime ") {
            guard let field = line.split(separator: " ").last, let seconds = Int64(field), seconds >= 0,
                seconds <= BatchRules.latestTimestamp / 1_000
            else { return nil }
            return seconds * 1_000
        }
        return nil
    }

    /// Reads `/proc/net/dev` (and sysfs when `readLinkState`), blocking for a few microseconds.
    ///
    /// - Throws: when `/proc/net/dev` cannot be read or parsed.
    public mutating func sample(at timestamp: Int64, readLinkState: Bool) throws -> TickSample {
        let rows = try ProcNetDev.parse(try FileIO.readBytes(procPath))
        var interfaces = [InterfaceSample]()
        interfaces.reserveCapacity(rows.count)
        var seen = Set<InterfaceName>()
        // What a new epoch found now began after, at the earliest: the boot at the first read, else the last read.
        let earliest = previousTimestamp ?? Self.bootTime(statPath: statPath)
        defer { previousTimestamp = timestamp }
        for row in rows where filter.accepts(row.name) {
            // The daemon would refuse the whole connection for such a name: it is left out, and said so once.
            if let why = row.name.violation {
                if refused.insert(row.name).inserted { unreported.append((row.name, why)) }
                continue
            }
            seen.insert(row.name)
            // A new interface's link facts are read at once, so its first batch already says what it is.
            let isNew = known[row.name] == nil
            var ifindex = known[row.name]?.ifindex
            if let previous = known[row.name]?.counters,
                zip(previous.values, row.counters.values).contains(where: { $1 < $0 })
            {
                ifindex = nil
            }
            if ifindex == nil || readLinkState { ifindex = sysfs.ifindex(row.name) ?? ifindex ?? 0 }
            let index = ifindex ?? 0
            let began = isNew || known[row.name]?.ifindex != index ? earliest : known[row.name]?.began
            known[row.name] = (index, row.counters, began)
            interfaces.append(
                InterfaceSample(
                    name: row.name,
                    epoch: CounterEpoch(bootID: bootID, ifindex: index, width: width),
                    counters: row.counters,
                    linkState: readLinkState || isNew ? sysfs.state(row.name) : nil, began: began))
        }
        for name in known.keys where !seen.contains(name) { known[name] = nil }
        return TickSample(timestamp: timestamp, interfaces: interfaces)
    }

    /// The interfaces left out since the last call because their names are refused, each once in the sampler's
    /// life: the caller logs them.
    public mutating func takeRefused() -> [(name: InterfaceName, why: String)] {
        defer { unreported.removeAll() }
        return unreported
    }
}
