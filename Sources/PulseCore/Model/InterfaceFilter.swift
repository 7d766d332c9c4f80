#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Chooses the interfaces to sample with shell globs (`eth*`, `veth?`, `[ew]*`): a name is sampled when it matches
/// an include pattern and no exclude pattern.
public struct InterfaceFilter: Sendable, Hashable {
    public var include: [String]
    public var exclude: [String]

    /// Everything but loopback, as node_exporter and vnStat do by default.
    public static let standard = InterfaceFilter(include: ["*"], exclude: ["lo"])

    public init(include: [String], exclude: [String]) {
        self.include = include
        self.exclude = exclude
    }

    public func accepts(_ name: InterfaceName) -> Bool {
        include.contains { Self.matches($0, name) } && !exclude.contains { Self.matches($0, name) }
    }

    /// `fnmatch(3)` on the raw name bytes, so names that are not UTF-8 still match exactly.
    public static func matches(_ pattern: String, _ name: InterfaceName) -> Bool {
        // `*` matches every name (no flags: a leading dot or a slash is an ordinary character); an alert rule over
        // all of a fleet's interfaces asks 10,000 times a round.
        if pattern == "*" { return true }
        var bytes = name.bytes.map { CChar(bitPattern: $0) }
        bytes.append(0)
        return fnmatch(pattern, bytes, 0) == 0
    }
}
