import PulseAnalytics
import PulseCore
import PulseStore

/// Everything `netpulsed` can be configured with; `config/netpulsed.toml` documents each setting and
/// `docs/configuration.md` explains them.
public struct DaemonConfig: Sendable, Hashable {
    /// Announced to agents in `WELCOME` and used in logs.
    public var name: String
    public var stateDirectory: String
    /// Where people read times, calendar windows and (unless `[billing]` says otherwise) billing periods.
    public var calendar: CivilCalendar
    /// `[daemon] time_zone` as the file sets it; nil: not set, and ``calendar`` is the zone the store recorded, else
    /// the system's (``resolvingTimeZone(recorded:system:)``).
    public var timeZoneSetting: String?
    /// Whether `[billing] time_zone` is set (else billing follows ``calendar``).
    var billingZoneSet = false

    public var listen: Endpoint
    public var maximumConnections: Int
    /// Connections still in their TLS handshake or before `HELLO`, in all, from one address and from one network.
    public var maximumHandshakes: Int
    public var maximumHandshakesPerAddress: Int
    public var maximumHandshakesPerNetwork: Int
    /// What counts as one network for ``maximumHandshakesPerNetwork``: an IPv4 /24 and an IPv6 /64 by default.
    public var handshakeNetworkPrefixes = NetworkPrefixes()
    /// Milliseconds a new connection has to complete TLS and `HELLO`.
    public var handshakeTimeout: Int64
    /// Milliseconds without any frame after which a connection is closed (agents send keepalives every 20 s).
    public var idleTimeout: Int64
    public var tls: TLSFiles
    /// The revocation list `netpulse ca revoke` writes (`[tls] revoked`): client certificates in it are refused at
    /// the handshake; nil: none is.
    public var revoked: String?
    /// `[enrollment]`: the issuing CA the daemon renews agents' certificates with, over their connections (none
    /// when its directory holds no CA).
    public var enrollment = EnrollmentSettings()

    /// The SQLite database file (the store unless `postgresql` is set).
    public var storePath: String
    /// A shared PostgreSQL database instead of the SQLite file (`[store] postgresql`, docs/scale-out.md).
    public var postgres: PostgresLocation?
    /// How long the leader lease lasts without renewal (ms): another daemon on the same PostgreSQL database takes
    /// over within about this long of the leader's loss (`[store] lease`).
    public var leaseLength: Int64 = 15_000
    /// The file holding the PostgreSQL user's password (`[store] password_file`); none with trust or peer
    /// authentication.
    public var postgresPasswordFile: String?
    /// Counting, levels and the store's durability.
    public var store: StoreSettings
    public var retention: RetentionPolicy
    /// Longest a batch waits for its group commit (milliseconds).
    public var commitDelay: Int64
    /// Pending batches above which agents are asked to slow down.
    public var paceThreshold: Int
    /// The most batches waiting for a commit; connections stop reading while it is reached.
    public var queueLimit: Int
    /// The most bytes of batches waiting for a commit (``IngestBatch/memoryCost``), and as many again waiting to be
    /// applied from the journal (`[ingest] queue_bytes`).
    public var queueBytes: Int = 256 << 20
    /// What one agent may grow (`[limits]`).
    public var agentLimits = AgentLimits()

    /// Labels set per agent (`[labels.AGENT]`); they override what the agent sends.
    public var labels: [String: Labels]
    /// The label keys agents may set themselves (`[labels] from_agents`); labels decide groups, bills and alert
    /// routing, so by default an agent sets none and every label comes from `[labels.AGENT]`.
    public var labelsFromAgents: Set<String> = []
    public var billing: BillingPolicy
    public var snapshots: SnapshotSettings
    public var dashboards: DashboardSettings
    public var alerts: AlertSettings
    public var reports: ReportSettings
    public var remoteWrite: RemoteWriteSettings
    /// Where the daemon serves its own metrics for Prometheus to scrape (`GET /metrics`), in plain HTTP and nothing
    /// else: the alias kept from before `[http]` (which serves them too); nil: not served there.
    public var metricsListen: Endpoint?
    /// The read-only HTTP server (`[http]`).
    public var http = HTTPSettings()

    /// The PostgreSQL database of `[store] postgresql`, with the password of `[store] password_file` read now; nil
    /// for the SQLite file.
    public func postgresLocation() throws -> PostgresLocation? {
        guard var location = postgres else { return nil }
        if let file = postgresPasswordFile {
            do { location.password = try FileIO.readString(file).trimmingWhitespace() } catch {
                throw SettingsError(
                    "cannot read the PostgreSQL password file \(file) ([store] password_file): \(error)")
            }
        }
        return location
    }

    /// A default config rooted at `stateDirectory` (for tests and tools).
    public init(stateDirectory: String, listen: Endpoint, tls: TLSFiles) {
        name = "netpulsed"
        self.stateDirectory = stateDirectory
        calendar = .utc
        self.listen = listen
        maximumConnections = 10_000
        maximumHandshakes = 1_024
        maximumHandshakesPerAddress = 128
        maximumHandshakesPerNetwork = 128
        handshakeTimeout = 10_000
        idleTimeout = 120_000
        self.tls = tls
        storePath = "\(stateDirectory)/netpulse.db"
        store = .standard
        retention = .standard
        commitDelay = 0
        paceThreshold = 4_096
        queueLimit = 8_192
        labels = [:]
        billing = BillingPolicy()
        snapshots = SnapshotSettings(directory: "\(stateDirectory)/snapshots")
        dashboards = DashboardSettings(directory: "\(stateDirectory)/dashboards")
        alerts = AlertSettings(directory: "\(stateDirectory)/alerts")
        reports = ReportSettings(directory: "\(stateDirectory)/reports")
        remoteWrite = RemoteWriteSettings()
    }

    /// This config with the zone of its calendar windows and bills settled, once the store is open: `[daemon]
    /// time_zone` when the file sets it; else the zone the store recorded, the one its bills were cut in (so a
    /// change of the system's zone, or an upgrade from when UTC was the default, never moves a billing period); else
    /// the system's (`/etc/localtime`). `[billing] time_zone`, when not set, follows.
    ///
    /// - Returns: the config; the zone to record in the store when it is not the one recorded (nil: none to
    ///   record); and where the zone came from, for the daemon's log.
    public func resolvingTimeZone(recorded: String?, system: CivilCalendar = .system()) -> (
        config: DaemonConfig, record: String?, source: String
    ) {
        var resolved = self
        let source: String
        if let setting = timeZoneSetting {
            source =
                "[daemon] time_zone"
                + (recorded.map { $0 != setting ? ", where the store's bills were cut in \($0) until now" : "" } ?? "")
        } else if let recorded, let calendar = CivilCalendar(identifier: recorded) {
            resolved.calendar = calendar
            source = "recorded in the store: its bills are cut in it; [daemon] time_zone changes it"
        } else if let recorded {
            // A zone this host's tz database does not know (another host's): not replaced, so that the bills' zone
            // comes back with a database that knows it, or with [daemon] time_zone.
            resolved.calendar = system
            if !billingZoneSet { resolved.billing.calendar = system }
            return (
                resolved, nil,
                "the system's, as the store's bills were cut in \(recorded), which this host's tz database does not know: set [daemon] time_zone"
            )
        } else {
            resolved.calendar = system
            source = "the system's (/etc/localtime)"
        }
        if !billingZoneSet { resolved.billing.calendar = resolved.calendar }
        let name = resolved.calendar.name
        return (resolved, recorded == name ? nil : name, source)
    }

    /// Loads and validates a config file.
    ///
    /// - Throws: ``ConfigError`` naming the file, the line, the key and the problem.
    public static func load(path: String) throws(ConfigError) -> DaemonConfig {
        try parse(ConfigDocument(contentsOf: path))
    }

    public static func parse(_ document: ConfigDocument) throws(ConfigError) -> DaemonConfig {
        var reader = ConfigReader(document)
        return try parse(&reader)
    }

    /// Every setting the parser reads from `document`, by table (``ConfigReader/settingsRead``), whether or not the
    /// document is valid.
    public static func settingsRead(_ document: ConfigDocument) -> [String: Set<String>] {
        ConfigReader.settingsRead(document) { (reader: inout ConfigReader) throws(ConfigError) in try parse(&reader) }
    }

    static func parse(_ reader: inout ConfigReader) throws(ConfigError) -> DaemonConfig {
        let stateDirectory = try reader.string("daemon", "state_directory", default: "/var/lib/netpulsed")
        let listenText = try reader.string("listen", "address", default: "0.0.0.0:7420")
        guard let listen = Endpoint(parsing: listenText) else {
            throw reader.invalid("listen", "address", "\"\(listenText)\" is not host:port (for IPv6: [::]:7420)")
        }
        var config = DaemonConfig(
            stateDirectory: stateDirectory, listen: listen,
            tls: TLSFiles(
                ca: try reader.string("tls", "ca", default: "/etc/netpulse/ca.pem"),
                certificate: try reader.string("tls", "certificate", default: "/etc/netpulse/netpulsed.pem"),
                key: try reader.string("tls", "key", default: "/etc/netpulse/netpulsed-key.pem")))
        config.revoked = try reader.optionalString("tls", "revoked")
        let enrollmentDirectory = try reader.string(
            "enrollment", "directory", default: EnrollmentSettings.defaultDirectory)
        let renewedValidity = try reader.duration(
            "enrollment", "validity", default: EnrollmentSettings.defaultValidity, range: 60_000...(3650 * 86_400_000))
        guard renewedValidity % 1000 == 0 else {
            throw reader.invalid("enrollment", "validity", "a certificate's validity is whole seconds (90d, 12h, 30m)")
        }
        config.enrollment = EnrollmentSettings(directory: enrollmentDirectory, validity: renewedValidity)
        config.name = try reader.string("daemon", "name", default: "netpulsed")
        config.timeZoneSetting = try reader.optionalString("daemon", "time_zone")
        config.calendar = try reader.calendar("daemon", "time_zone", default: .system())
        config.maximumConnections = Int(
            try reader.integer("listen", "max_connections", default: 10_000, range: 1...1_000_000))
        config.maximumHandshakes = Int(
            try reader.integer("listen", "max_handshakes", default: 1_024, range: 1...1_000_000))
        config.maximumHandshakesPerAddress = Int(
            try reader.integer("listen", "max_handshakes_per_address", default: 128, range: 1...1_000_000))
        config.maximumHandshakesPerNetwork = Int(
            try reader.integer("listen", "max_handshakes_per_network", default: 128, range: 1...1_000_000))
        config.handshakeNetworkPrefixes = NetworkPrefixes(
            ipv4: Int(try reader.integer("listen", "network_prefix_ipv4", default: 24, range: 8...32)),
            ipv6: Int(try reader.integer("listen", "network_prefix_ipv6", default: 64, range: 16...128)))
        config.handshakeTimeout = try reader.duration(
            "listen", "handshake_timeout", default: 10_000, range: 100...600_000)
        config.idleTimeout = try reader.duration("listen", "idle_timeout", default: 120_000, range: 1_000...86_400_000)
        let path = try reader.string("store", "path", default: "netpulse.db")
        config.storePath = path.hasPrefix("/") ? path : "\(stateDirectory)/\(path)"
        if let url = try reader.optionalString("store", "postgresql") {
            let location: PostgresLocation
            do { location = try PostgresLocation(url: url) } catch {
                throw reader.invalid("store", "postgresql", "\(error)")
            }
            guard location.password == nil else {
                throw reader.invalid(
                    "store", "postgresql", "holds a password; put it in a file named by [store] password_file instead")
            }
            config.postgres = location
        }
        config.postgresPasswordFile = try reader.optionalString("store", "password_file")
        config.leaseLength = try reader.duration("store", "lease", default: 15_000, range: 1_000...600_000)
        if config.postgresPasswordFile != nil && config.postgres == nil {
            throw reader.invalid("store", "password_file", "is set without [store] postgresql")
        }
        let synchronous = try reader.string("store", "synchronous", default: "full")
        guard let mode = StoreSettings.Synchronous(rawValue: synchronous.uppercased()) else {
            throw reader.invalid("store", "synchronous", "is \"\(synchronous)\"; use \"full\" or \"normal\"")
        }
        config.store.synchronous = mode
        config.commitDelay = try reader.duration("store", "commit_delay", default: 0, range: 0...1_000)
        config.paceThreshold = Int(
            try reader.integer("ingest", "pace_threshold", default: 4_096, range: 16...1_000_000))
        config.queueLimit = Int(try reader.integer("ingest", "queue_limit", default: 8_192, range: 1...1_000_000))
        config.queueBytes = Int(
            try reader.byteSize("ingest", "queue_bytes", default: 256 << 20, range: (1 << 20)...(64 << 30)))
        config.agentLimits = AgentLimits(
            connections: Int(try reader.integer("limits", "connections_per_agent", default: 4, range: 1...1_024)),
            interfaces: Int(
                try reader.integer("limits", "interfaces_per_agent", default: 4_096, range: 1...16_384)),
            streams: Int(try reader.integer("limits", "streams_per_agent", default: 256, range: 1...65_536)),
            labelValues: Int(
                try reader.integer("limits", "label_values_per_agent", default: 64, range: 1...1_000_000)))
        config.store.maximumSequenceRanges = Int(
            try reader.integer("limits", "sequence_ranges_per_stream", default: 4_096, range: 16...1_000_000))
        config.store.maximumRate = UInt64(
            try reader.integer(
                "ingest", "max_rate", default: 50_000_000_000, range: 1_000...1_000_000_000_000_000))
        config.store.clockTolerance = try reader.duration(
            "ingest", "clock_tolerance", default: 30_000, range: 1_000...86_400_000)
        // `docs/windows.md`, "Clocks" and "Time that cannot be placed": a week-old spool is placed by default, a
        // batch ending up to a day ahead is moved back.
        config.store.maximumSkew = try reader.duration(
            "ingest", "max_skew", default: 86_400_000, range: config.store.clockTolerance...(366 * 86_400_000))
        config.store.maximumAge = try reader.duration(
            "ingest", "max_age", default: 14 * 86_400_000, range: 3_600_000...(400 * 86_400_000))
        // `docs/windows.md`, "Time classes and spreading": a gap longer than this is an outage.
        config.store.outageAfter = try reader.duration(
            "ingest", "outage_after", default: 15 * 60_000, range: 60_000...86_400_000)
        try parseRollups(&reader, into: &config)
        config.store.rules = try parseAggregation(&reader)
        for (agent, _) in reader.subtables(of: "labels") {
            config.labels[agent] = try reader.labels("labels.\(agent)")
        }
        config.billing = try parseBilling(&reader, calendar: config.calendar)
        config.billingZoneSet = try reader.optionalString("billing", "time_zone") != nil
        let fromAgents = try reader.stringArray("labels", "from_agents", default: [])
        for key in fromAgents where !Labels.isValidKey(key) {
            throw reader.invalid(
                "labels", "from_agents", "has \"\(key)\", which is not a label name (\(Labels.keyRule))")
        }
        for key in fromAgents where config.billing.groupBy.contains(key) {
            throw reader.invalid(
                "labels", "from_agents",
                "has \"\(key)\", a key of [billing] group_by: billing groups come only from [labels.AGENT]")
        }
        config.labelsFromAgents = Set(fromAgents)
        // What people read (dashboards, snapshots, alert charts, reports) goes under publish_directory, which the
        // units keep outside the daemon's private state, readable by the group netpulse (docs/operations.md).
        let publish = try reader.string("daemon", "publish_directory", default: stateDirectory)
        let published = publish.hasPrefix("/") ? publish : "\(stateDirectory)/\(publish)"
        config.snapshots = try SnapshotSettings.parse(&reader, stateDirectory: published)
        config.dashboards = try DashboardSettings.parse(&reader, stateDirectory: published)
        config.alerts = try AlertSettings.parse(&reader, stateDirectory: published)
        config.reports = try ReportSettings.parse(&reader, stateDirectory: published)
        config.remoteWrite = try RemoteWriteSettings.parse(&reader)
        // Off unless asked for: the metrics have no authentication, so the address is the operator's choice (the
        // documented one is on loopback).
        if let text = try reader.optionalString("metrics", "listen"), !text.isEmpty {
            guard let endpoint = Endpoint(parsing: text) else {
                throw reader.invalid(
                    "metrics", "listen", "\"\(text)\" is not host:port (for example \"127.0.0.1:9470\")")
            }
            config.metricsListen = endpoint
        }
        config.http = try HTTPSettings.parse(&reader, daemonTLS: config.tls)
        try reader.rejectUnknown()
        return config
    }

    /// `[rollups] levels` and `[retention]`.
    private static func parseRollups(_ reader: inout ConfigReader, into config: inout DaemonConfig) throws(ConfigError)
    {
        let names = try reader.stringArray("rollups", "levels", default: ["1m", "5m", "1h", "1d"], allowEmpty: false)
        var levels = [RollupLevel]()
        for name in names {
            guard let width = Units.parseDuration(name), width >= 1_000, width % 1_000 == 0, width <= 86_400_000,
                86_400_000 % width == 0
            else {
                throw reader.invalid(
                    "rollups", "levels", "has \"\(name)\"; a level is a whole number of seconds that divides a day")
            }
            levels.append(RollupLevel(width: width))
        }
        levels.sort()
        for (finer, coarser) in zip(levels, levels.dropFirst()) where coarser.width % finer.width != 0 {
            throw reader.invalid("rollups", "levels", "\(coarser) is not a multiple of \(finer)")
        }
        guard levels.contains(.fiveMinutes) else {
            throw reader.invalid(
                "rollups", "levels", "must include \"5m\": 95th-percentile billing reads 5-minute rates")
        }
        config.store.levels = levels
        let standard = RetentionPolicy.standard
        var retention = RetentionPolicy(
            raw: try reader.duration(
                "retention", "raw", default: standard.raw, range: 3_600_000...(3_650 * 86_400_000)),
            levels: [:],
            lateData: try reader.duration(
                "retention", "late_data", default: standard.lateData, range: 3_600_000...(400 * 86_400_000)))
        for level in levels {
            let key = level.description
            var keep = standard.keeps(level)
            if let text = try reader.optionalString("retention", key) {
                keep =
                    text == "forever"
                    ? nil
                    : try reader.duration("retention", key, default: 0, range: 86_400_000...(36_500 * 86_400_000))
            }
            retention.levels[level] = .some(keep)
        }
        if let fiveMinutes = retention.levels[.fiveMinutes] ?? nil, fiveMinutes < 62 * 86_400_000 {
            throw reader.invalid(
                "retention", "5m", "must keep at least 62 days: a bill needs its whole period and the one before")
        }
        config.retention = retention
    }

    /// `[aggregation]` and `[aggregation.NAME]`: what counts toward host, group and fleet totals.
    private static func parseAggregation(_ reader: inout ConfigReader) throws(ConfigError) -> ScopeRules {
        func rule(_ table: String, _ fallback: CountingRule) throws(ConfigError) -> CountingRule {
            let names = try reader.stringArray(table, "count", default: fallback.kinds.map(\.name).sorted())
            var kinds = Set<InterfaceKind>()
            for name in names {
                guard let kind = InterfaceKind(name: name) else {
                    throw reader.invalid(
                        table, "count",
                        "has \"\(name)\"; kinds are \(InterfaceKind.allCases.map(\.name).joined(separator: ", "))")
                }
                kinds.insert(kind)
            }
            return CountingRule(
                kinds: kinds, exclude: try reader.stringArray(table, "exclude", default: fallback.exclude))
        }
        var rules = ScopeRules(standard: try rule("aggregation", .standard))
        var tables = [GroupKey: String]()
        for (name, _) in reader.subtables(of: "aggregation") {
            let table = "aggregation.\(name)"
            let text = try reader.string(table, "match", default: "")
            guard let group = GroupKey(parsing: text) else {
                throw reader.invalid(table, "match", "must name a group as \"key=value\", such as \"site=lab\"")
            }
            if let earlier = tables[group] {
                throw reader.invalid(
                    table, "match", "names \(group) as [\(earlier)] does; one [aggregation.NAME] table per group")
            }
            tables[group] = table
            rules.groups[group] = try rule(table, rules.standard)
        }
        return rules
    }

    /// `[billing]` and `[billing.NAME]`.
    private static func parseBilling(
        _ reader: inout ConfigReader, calendar: CivilCalendar
    ) throws(ConfigError) -> BillingPolicy {
        /// A key whose value is one of `Value`'s names.
        func choice<Value: RawRepresentable & CaseIterable>(
            _ table: String, _ key: String, _ fallback: Value?
        ) throws(ConfigError) -> Value? where Value.RawValue == String {
            guard let text = try reader.optionalString(table, key) else { return fallback }
            guard let value = Value(rawValue: text) else {
                let names = Value.allCases.map { "\"\($0.rawValue)\"" }
                throw reader.invalid(
                    table, key,
                    "is \"\(text)\"; use \(names.dropLast().joined(separator: ", ")) or \(names.last ?? "")")
            }
            return value
        }
        var policy = BillingPolicy(
            day: Int(try reader.integer("billing", "day", default: 1, range: 1...31)),
            method: try choice("billing", "method", BillingMethod.max)!,
            intervals: IntervalTerms(
                interpolated: try choice("billing", "interpolated", IntervalUse.count)!,
                flagged: try choice("billing", "flagged", IntervalUse.count)!),
            rank: try choice("billing", "rank", RankConvention.round)!,
            calendar: try reader.calendar("billing", "time_zone", default: calendar),
            closeAfter: try reader.duration("billing", "close_after", default: 3_600_000, range: 0...(31 * 86_400_000)),
            groupBy: try reader.stringArray("billing", "group_by", default: []))
        for key in policy.groupBy where !Labels.isValidKey(key) {
            throw reader.invalid("billing", "group_by", "has \"\(key)\", which is not a label name")
        }
        for (name, _) in reader.subtables(of: "billing") {
            let table = "billing.\(name)"
            let text = try reader.string(table, "match", default: "")
            guard let scope = BilledScope(parsing: text) else {
                throw reader.invalid(
                    table, "match", "must be \"fleet\", a group \"key=value\", an agent, or \"agent/interface\"")
            }
            let day = try reader.optionalInteger(table, "day", range: 1...31)
            policy.overrides.append(
                BillingOverride(
                    name: name, match: scope, day: day.map(Int.init),
                    method: try choice(table, "method", BillingMethod?.none),
                    interpolated: try choice(table, "interpolated", IntervalUse?.none),
                    flagged: try choice(table, "flagged", IntervalUse?.none),
                    rank: try choice(table, "rank", RankConvention?.none)))
        }
        return policy
    }

    /// An agent's labels as the daemon uses them: of what it sent, the keys `[labels] from_agents` allows (never one
    /// that decides billing groups), then the daemon's own labels for it on top, which always win
    /// (`docs/windows.md`, "Scopes").
    ///
    /// - Parameter ownLabels: false leaves the daemon's own out: what the agent sets itself.
    public func effectiveLabels(agent: String, sent: Labels, ownLabels: Bool = true) -> Labels {
        let own = labels[agent] ?? Labels([])
        var pairs = sent.pairs.filter { pair in
            labelsFromAgents.contains(pair.key) && !billing.groupBy.contains(pair.key)
                && !own.pairs.contains { $0.key == pair.key }
        }
        if ownLabels { pairs += own.pairs }
        return Labels(pairs.sorted { $0.key < $1.key })
    }
}

extension ConfigReader {
    /// A time zone of the system's tz database, by name (`"Europe/Berlin"`, `"UTC"`).
    mutating func calendar(
        _ table: String, _ key: String, default fallback: CivilCalendar
    ) throws(ConfigError) -> CivilCalendar {
        guard let name = try optionalString(table, key) else { return fallback }
        guard let calendar = CivilCalendar(identifier: name) else {
            throw invalid(table, key, "\"\(name)\" is not a time zone of the tz database (see /usr/share/zoneinfo)")
        }
        return calendar
    }
}

/// A setting that cannot be used as it stands, found after the file was read (a password file that cannot be read).
public struct SettingsError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// `[enrollment]`: renewal of agents' certificates by the daemon (`docs/operations.md`, "Certificates that renew
/// themselves").
public struct EnrollmentSettings: Sendable, Hashable {
    /// Ninety days, as Let's Encrypt issues: with renewal at two thirds of the lifetime, an agent renews every two
    /// months and has a month to reach the daemon before its certificate lapses; a leaked key is useful for at most
    /// that long even if nobody notices.
    public static let defaultValidity: Int64 = 90 * 86_400_000

    /// Where `netpulse ca init --dir /etc/netpulse/ca` puts the issuing CA.
    public static let defaultDirectory = "/etc/netpulse/enrollment"

    /// The issuing CA's directory (`ca.pem`, `ca-key.pem`), as `netpulse ca init` or `netpulse ca issuing` made it.
    /// Without a `ca.pem` there, the daemon renews nothing (and says so at start), so a daemon upgraded from before
    /// renewal, or a fleet that does without it, runs as before.
    public var directory: String
    /// How long a renewed certificate is valid, in milliseconds (whole seconds).
    public var validity: Int64

    public init(directory: String = defaultDirectory, validity: Int64 = defaultValidity) {
        self.directory = directory
        self.validity = validity
    }
}
