import PulseCore

/// One interface at one tick.
public struct InterfaceSample: Sendable, Hashable {
    public var name: InterfaceName
    public var epoch: CounterEpoch
    public var counters: CounterValues
    /// Set on ticks where link facts were read (see ``Sampler/sample(at:readLinkState:)``).
    public var linkState: LinkState?
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
public struct Sampler: Sendable {
    public var filter: InterfaceFilter
    public let bootID: BootID
    public let width: CounterWidth
    public let procPath: String
    public let sysfs: SysfsLink
    private var known: [InterfaceName: (ifindex: UInt32, counters: CounterValues)] = [:]
    /// Interfaces left out because the protocol refuses their names (``InterfaceName/violation``), and those of
    /// them not yet handed out by ``takeRefused()``.
    private var refused = Set<InterfaceName>()
    private var unreported = [(name: InterfaceName, why: String)]()

    public init(
        filter: InterfaceFilter, bootID: BootID, width: CounterWidth = .native,
        procPath: String = ProcNetDev.path, sysfs: SysfsLink = SysfsLink()
    ) {
        self.filter = filter
        self.bootID = bootID
        self.width = width
        self.procPath = procPath
        self.sysfs = sysfs
    }

    /// Reads `/proc/net/dev` (and sysfs when `readLinkState`), blocking for a few microseconds.
    ///
    /// - Throws: when `/proc/net/dev` cannot be read or parsed.
    public mutating func sample(at timestamp: Int64, readLinkState: Bool) throws -> TickSample {
        let rows = try ProcNetDev.parse(try FileIO.readBytes(procPath))
        var interfaces = [InterfaceSample]()
        interfaces.reserveCapacity(rows.count)
        var seen = Set<InterfaceName>()
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
            known[row.name] = (index, row.counters)
            interfaces.append(
                InterfaceSample(
                    name: row.name,
                    epoch: CounterEpoch(bootID: bootID, ifindex: index, width: width),
                    counters: row.counters,
                    linkState: readLinkState || isNew ? sysfs.state(row.name) : nil))
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
