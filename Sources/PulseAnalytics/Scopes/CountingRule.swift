import PulseCore

/// Which interfaces count toward host, group and fleet totals, so that a bond and its slaves, a bridge and its
/// ports, VLANs, veths and tunnels do not count the same bytes twice (`docs/windows.md`, "Scopes").
public struct CountingRule: Sendable, Hashable {
    public var kinds: Set<InterfaceKind>
    /// Names never counted (shell globs).
    public var exclude: [String]

    /// Physical and bond interfaces. Not those whose kind the agent could not tell: they may be bridges, VLANs,
    /// veths or bond slaves, whose bytes a counted interface already carries (`docs/windows.md`, "Scopes").
    public static let standard = CountingRule(kinds: [.physical, .bond], exclude: [])

    public init(kinds: Set<InterfaceKind>, exclude: [String]) {
        self.kinds = kinds
        self.exclude = exclude
    }

    /// Whether an interface of this kind and relation counts. A bond's slaves are left out when bonds count, a
    /// bridge's ports when bridges count: their bytes are already in the bond or bridge.
    public func counts(name: InterfaceName, kind: InterfaceKind, relation: InterfaceRelation) -> Bool {
        guard kinds.contains(kind) else { return false }
        if relation.contains(.bondSlave) && kinds.contains(.bond) { return false }
        if relation.contains(.bridgePort) && kinds.contains(.bridge) { return false }
        return !exclude.contains { InterfaceFilter.matches($0, name) }
    }
}

/// A group: one label's key and value (`site=fra1`).
public struct GroupKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var key: String
    public var value: String

    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }

    /// Parses `key=value`.
    public init?(parsing text: String) {
        guard let equals = text.firstIndex(of: "=") else { return nil }
        let key = String(text[..<equals])
        let value = String(text[text.index(after: equals)...])
        guard Labels.isValidKey(key), !value.isEmpty else { return nil }
        self.init(key: key, value: value)
    }

    public var description: String { "\(key)=\(value)" }

    public static func < (lhs: GroupKey, rhs: GroupKey) -> Bool {
        (lhs.key, lhs.value) < (rhs.key, rhs.value)
    }
}

/// The counting rules of every scope: one for hosts and the fleet (and groups without their own), and overrides
/// per group.
public struct ScopeRules: Sendable, Hashable {
    public var standard: CountingRule
    public var groups: [GroupKey: CountingRule]

    public init(standard: CountingRule = .standard, groups: [GroupKey: CountingRule] = [:]) {
        self.standard = standard
        self.groups = groups
    }

    public func rule(for group: GroupKey) -> CountingRule { groups[group] ?? standard }
}
