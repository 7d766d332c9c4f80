import Dispatch
import Foundation
import PulseAnalytics
import PulseCore
import PulseReports
import PulseStore
import Synchronization
import Testing

@testable import PulseDaemon
@testable import PulseSettings

@Suite struct DaemonConfigTests {
    @Test func exampleFileLoadsAndErrorsNameTheLine() throws {
        var root = #filePath
        for _ in 0..<3 { root = FileIO.parentDirectory(root) }
        let config = try DaemonConfig.load(path: "\(root)/config/netpulsed.toml")
        #expect(config.listen == Endpoint(host: "0.0.0.0", port: 7420))
        #expect(config.storePath == "/var/lib/netpulsed/netpulse.db")
        #expect(config.store.levels == RollupLevel.standard)
        #expect(config.retention == .standard)
        #expect(
            throws: ConfigError(
                file: "d.toml", line: 2, key: "store.synchronous", "is \"sometimes\"; use \"full\" or \"normal\"")
        ) {
            try DaemonConfig.parse(ConfigDocument(text: "[store]\nsynchronous = \"sometimes\"\n", file: "d.toml"))
        }
        #expect(
            throws: ConfigError(
                file: "d.toml", line: 2, key: "listen.adress",
                "is not a known setting of [listen]; known: address, handshake_timeout, idle_timeout, max_connections, max_handshakes, max_handshakes_per_address, max_handshakes_per_network, network_prefix_ipv4, network_prefix_ipv6"
            )
        ) {
            try DaemonConfig.parse(ConfigDocument(text: "[listen]\nadress = \"x\"\n", file: "d.toml"))
        }
    }

    @Test func handshakeNetworkSettingsAreReadWithDefaultsAndRanges() throws {
        let defaults = try DaemonConfig.parse(ConfigDocument(text: "", file: "d.toml"))
        #expect(defaults.maximumHandshakesPerNetwork == 128)
        #expect(defaults.handshakeNetworkPrefixes == ConnectionSource.Prefixes(ipv4: 24, ipv6: 64))
        let set = try DaemonConfig.parse(
            ConfigDocument(
                text: "[listen]\nmax_handshakes_per_network = 16\nnetwork_prefix_ipv4 = 20\nnetwork_prefix_ipv6 = 48\n",
                file: "d.toml"))
        #expect(set.maximumHandshakesPerNetwork == 16)
        #expect(set.handshakeNetworkPrefixes == ConnectionSource.Prefixes(ipv4: 20, ipv6: 48))
        #expect(throws: ConfigError.self) {
            try DaemonConfig.parse(ConfigDocument(text: "[listen]\nnetwork_prefix_ipv6 = 129\n", file: "d.toml"))
        }
        #expect(
            throws: ConfigError(
                file: "d.toml", line: 3, key: "listen.network_prefix_ipv4", "is 4; it must be between 8 and 32")
        ) {
            try DaemonConfig.parse(ConfigDocument(text: "[listen]\n\nnetwork_prefix_ipv4 = 4\n", file: "d.toml"))
        }
    }

    @Test func analyticsSettingsAreReadAndCheckedWithTheirLines() throws {
        let config = try DaemonConfig.parse(
            ConfigDocument(
                text: """
                    [daemon]
                    time_zone = "Europe/Berlin"
                    [rollups]
                    levels = ["1m", "5m", "1h", "1d"]
                    [retention]
                    raw = "72h"
                    1d = "forever"
                    1h = "365d"
                    [aggregation]
                    count = ["physical", "bond", "veth"]
                    [aggregation.lab]
                    match = "site=lab"
                    count = ["physical"]
                    [billing]
                    day = 15
                    method = "sum"
                    group_by = ["customer"]
                    flagged = "exclude"
                    [billing.acme]
                    match = "customer=acme"
                    day = 1
                    rank = "nearest-rank"
                    interpolated = "exclude"
                    [labels.web-01]
                    site = "fra1"
                    [snapshots]
                    windows = ["last-1h", "this-month"]
                    [dashboards]
                    ranges = ["day", "hour"]
                    hour_interval = "30s"
                    keep = 10
                    max_age = "3d"
                    host_pages = false
                    """, file: "d.toml"))
        #expect(config.calendar.timeZone.identifier == "Europe/Berlin")
        #expect(config.retention.raw == 72 * 3_600_000)
        #expect(config.retention.keeps(.oneDay) == nil && config.retention.keeps(.oneHour) == 365 * 86_400_000)
        #expect(config.store.rules.standard.kinds == [.physical, .bond, .veth])
        #expect(config.store.rules.groups[GroupKey(key: "site", value: "lab")]?.kinds == [.physical])
        #expect(config.billing.day == 15 && config.billing.method == .sum)
        #expect(
            config.billing.terms(for: .group(GroupKey(key: "customer", value: "acme")))
                == BillingTerms(
                    day: 1, method: .sum, intervals: IntervalTerms(interpolated: .exclude, flagged: .exclude),
                    rank: .nearestRank))
        #expect(
            config.billing.terms(for: .fleet)
                == BillingTerms(
                    day: 15, method: .sum, intervals: IntervalTerms(interpolated: .count, flagged: .exclude),
                    rank: .round))
        #expect(config.store.outageAfter == 15 * 60_000)
        #expect(config.labels["web-01"] == Labels([("site", "fra1")]))
        #expect(config.snapshots.windows == [.last(3_600_000), .calendar(.month, offset: 0)])
        #expect(config.dashboards.ranges.map(\.range) == [.day, .hour])
        #expect(config.dashboards.ranges.map(\.interval) == [300_000, 30_000])
        #expect(config.dashboards.retention == DashboardRetention(keep: 10, maximumAge: 3 * 86_400_000))
        #expect(!config.dashboards.hostPages && config.dashboards.directory.hasSuffix("/dashboards"))

        let bad: [(String, ConfigError)] = [
            (
                "[rollups]\nlevels = [\"1m\", \"7m\"]\n",
                ConfigError(
                    file: "d.toml", line: 2, key: "rollups.levels",
                    "has \"7m\"; a level is a whole number of seconds that divides a day")
            ),
            (
                "[rollups]\nlevels = [\"1m\", \"1h\"]\n",
                ConfigError(
                    file: "d.toml", line: 2, key: "rollups.levels",
                    "must include \"5m\": 95th-percentile billing reads 5-minute rates")
            ),
            (
                "[daemon]\ntime_zone = \"Mars/Olympus\"\n",
                ConfigError(
                    file: "d.toml", line: 2, key: "daemon.time_zone",
                    "\"Mars/Olympus\" is not a time zone of the tz database (see /usr/share/zoneinfo)")
            ),
            (
                "[billing]\nmethod = \"median\"\n",
                ConfigError(
                    file: "d.toml", line: 2, key: "billing.method",
                    "is \"median\"; use \"in\", \"out\", \"max\" or \"sum\"")
            ),
            (
                "[aggregation.a]\nmatch = \"site=lab\"\n[aggregation.b]\nmatch = \"site=lab\"\n",
                ConfigError(
                    file: "d.toml", line: 4, key: "aggregation.b.match",
                    "names site=lab as [aggregation.a] does; one [aggregation.NAME] table per group")
            ),
            (
                "[billing.x]\nmatch = \"fleet\"\nrank = \"median\"\n",
                ConfigError(
                    file: "d.toml", line: 3, key: "billing.x.rank",
                    "is \"median\"; use \"round\" or \"nearest-rank\"")
            ),
            (
                "[billing]\ninterpolated = \"drop\"\n",
                ConfigError(
                    file: "d.toml", line: 2, key: "billing.interpolated", "is \"drop\"; use \"count\" or \"exclude\"")
            ),
            (
                "[ingest]\noutage_after = \"10s\"\n",
                ConfigError(file: "d.toml", line: 2, key: "ingest.outage_after", "is 10s; it must be between 1m and 1d")
            ),
            (
                "[aggregation]\ncount = [\"nics\"]\n",
                ConfigError(
                    file: "d.toml", line: 2, key: "aggregation.count",
                    "has \"nics\"; kinds are unknown, physical, bond, bridge, vlan, veth, loopback, tunnel, virtual")
            ),
            (
                "[labels.web-01]\nSite = \"x\"\n",
                ConfigError(
                    file: "d.toml", line: 2, key: "labels.web-01.Site",
                    "is not a label name: use a-z, 0-9 and '_', not starting with a digit or '__', at most 64 bytes")
            ),
            (
                "[snapshots]\nwindows = [\"fortnight\"]\n",
                ConfigError(
                    file: "d.toml", line: 2, key: "snapshots.windows",
                    "has \"fortnight\"; use last-DURATION (last-1h), today, yesterday, this-week, last-week, this-month, last-month, this-year, billing-period or last-billing-period"
                )
            ),
            (
                "[dashboards]\nranges = [\"hour\", \"year\"]\n",
                ConfigError(
                    file: "d.toml", line: 2, key: "dashboards.ranges",
                    "has \"year\"; use hour, day, week and/or month")
            ),
            (
                "[dashboards]\nhour_interval = \"1s\"\n",
                ConfigError(
                    file: "d.toml", line: 2, key: "dashboards.hour_interval", "is 1s; it must be between 10s and 7d")
            ),
            (
                "[retention]\n5m = \"30d\"\n",
                ConfigError(
                    file: "d.toml", line: 2, key: "retention.5m",
                    "must keep at least 62 days: a bill needs its whole period and the one before")
            ),
        ]
        for (text, error) in bad {
            #expect(throws: error) { try DaemonConfig.parse(ConfigDocument(text: text, file: "d.toml")) }
        }
    }

    /// Agents set only the label keys `[labels] from_agents` allows (none by default: labels decide groups, bills and
    /// alert routing), never a billing key, and the daemon's own labels for an agent win.
    @Test func agentsSetOnlyTheLabelsTheDaemonAllows() throws {
        let sent = Labels([("customer", "free-ride"), ("role", "edge"), ("site", "fra1")])
        let closed = try DaemonConfig.parse(
            ConfigDocument(text: "[labels.a]\nrole = \"db\"\n", file: "d.toml"))
        #expect(closed.effectiveLabels(agent: "a", sent: sent) == Labels([("role", "db")]))
        #expect(closed.effectiveLabels(agent: "b", sent: sent) == Labels([]))
        let config = try DaemonConfig.parse(
            ConfigDocument(
                text:
                    "[billing]\ngroup_by = [\"customer\"]\n[labels]\nfrom_agents = [\"role\", \"site\"]\n[labels.a]\nrole = \"db\"\n",
                file: "d.toml"))
        #expect(config.effectiveLabels(agent: "a", sent: sent) == Labels([("role", "db"), ("site", "fra1")]))
        #expect(config.effectiveLabels(agent: "b", sent: sent) == Labels([("role", "edge"), ("site", "fra1")]))
        #expect(throws: ConfigError.self) {
            try DaemonConfig.parse(
                ConfigDocument(
                    text: "[billing]\ngroup_by = [\"customer\"]\n[labels]\nfrom_agents = [\"customer\"]\n",
                    file: "d.toml"))
        }
    }

    /// The metrics endpoint is off unless `[metrics] listen` names an address; a bad one names its line.
    @Test func metricsAreServedOnlyWhereAsked() throws {
        #expect(try DaemonConfig.parse(ConfigDocument(text: "", file: "d.toml")).metricsListen == nil)
        let config = try DaemonConfig.parse(
            ConfigDocument(text: "[metrics]\nlisten = \"127.0.0.1:9470\"\n", file: "d.toml"))
        #expect(config.metricsListen == Endpoint(host: "127.0.0.1", port: 9470))
        #expect(
            throws: ConfigError(
                file: "d.toml", line: 3, key: "metrics.listen",
                "\"localhost\" is not host:port (for example \"127.0.0.1:9470\")")
        ) {
            try DaemonConfig.parse(ConfigDocument(text: "\n[metrics]\nlisten = \"localhost\"\n", file: "d.toml"))
        }
    }

    /// `[http]`: the socket by default, TCP only when asked and then with TLS unless on loopback; mistakes name their
    /// line.
    @Test func theHTTPServerListensWhereAskedAndOnlyWithTLSBeyondLoopback() throws {
        let defaults = try DaemonConfig.parse(ConfigDocument(text: "", file: "d.toml")).http
        #expect(defaults.socket == "/run/netpulsed/http.sock")
        #expect(defaults.listen == nil && defaults.tls && defaults.usersFile == nil)
        #expect(
            defaults.files
                == TLSFiles(
                    ca: "/etc/netpulse/ca.pem", certificate: "/etc/netpulse/netpulsed.pem",
                    key: "/etc/netpulse/netpulsed-key.pem"))
        let set = try DaemonConfig.parse(
            ConfigDocument(
                text: "[http]\nsocket = \"\"\nlisten = \"[::1]:9470\"\ntls = false\nusers_file = \"/etc/u\"\n",
                file: "d.toml")
        ).http
        #expect(set.socket == nil && set.listen == Endpoint(host: "::1", port: 9470) && !set.tls)
        #expect(set.plainTextWarning?.contains("without TLS") == true)
        func refusal(_ text: String) -> String {
            do {
                _ = try DaemonConfig.parse(ConfigDocument(text: text, file: "d.toml"))
                return "accepted"
            } catch { return "\(error)" }
        }
        #expect(
            refusal("[http]\nlisten = \"0.0.0.0:9470\"\ntls = false\n")
                .hasPrefix("d.toml:3: 'http.tls' is false but [http] listen 0.0.0.0:9470 is not a loopback address"))
        #expect(
            refusal("[http]\nlisten = \"127.0.0.1:9470\"\ntls = false\n")
                .hasPrefix("d.toml:3: 'http.tls' is false and there is no [http] users_file"))
        #expect(
            refusal("[http]\nusers_file = \"/etc/u\"\n").contains(
                "d.toml:2: 'http.users_file' is set without [http] listen"))
        #expect(
            refusal("[http]\nsocket = \"http.sock\"\n").contains(
                "d.toml:2: 'http.socket' is \"http.sock\", not an absolute path"))
        #expect(
            refusal("[http]\ncertificate = \"/c.pem\"\n").contains(
                "d.toml:2: 'http.certificate' is set without the other"))
    }

    /// A users file line that is not `NAME:BCRYPT-HASH` stops the start with its line; a good one checks passwords.
    @Test func basicAuthUsersAreBcryptLinesCheckedWithCrypt() throws {
        let path = "/tmp/netpulse-users-\(UInt64.random(in: 0...UInt64.max))"
        defer { try? FileIO.remove(path) }
        // "s3cret" at cost 4, made with Python's crypt module (which calls the same libxcrypt).
        let hash = "$2b$04$HS86laF6JAd..m.m3ROWwexoJMxhzQjBrVrgAzNv.spteZnVJGbHe"
        try FileIO.writeAtomically(path, Array("# operators\n\nbob:\(hash)\n".utf8))
        let users = try BasicAuthUsers(path: path)
        #expect(users.check(user: "bob", password: "s3cret"))
        #expect(users.check(user: "bob", password: "s3cret"), "remembered")
        #expect(!users.check(user: "bob", password: "s3cret "))
        #expect(!users.check(user: "alice", password: "s3cret"))
        // Changed on disk: read again, and what was remembered is forgotten.
        try FileIO.writeAtomically(path, Array("alice:\(hash)\n".utf8))
        #expect(!users.check(user: "bob", password: "s3cret"))
        #expect(users.check(user: "alice", password: "s3cret"))
        func refusal(_ text: String) -> String {
            do {
                try FileIO.writeAtomically(path, Array(text.utf8))
                _ = try BasicAuthUsers(path: path)
                return "accepted"
            } catch { return "\(error)" }
        }
        #expect(refusal("bob:$1$md5$xyz\n").hasPrefix("\(path):1: the hash of 'bob' is not bcrypt"))
        #expect(refusal("\nbob\n").hasPrefix("\(path):2: not NAME:HASH"))
        #expect(refusal("bob:\(hash)\nbob:\(hash)\n").hasPrefix("\(path):2: 'bob' is listed twice"))
    }

    /// Password checks run one at a time with a bounded line behind them: past it a login is refused at once.
    @Test(.timeLimit(.minutes(1)))
    func passwordChecksRunOneAtATimeAndTurnAwayPastTheLine() async throws {
        let checks = PasswordChecks()
        let gate = DispatchSemaphore(value: 0)
        let running = Guarded((now: 0, most: 0))
        let refused = Guarded(0)
        let extra = 3
        try await withThrowingTaskGroup(of: Bool?.self) { group in
            for _ in 0..<(1 + PasswordChecks.waiting + extra) {
                group.addTask {
                    let result = try await checks.run {
                        running.value.withLock {
                            $0.now += 1
                            $0.most = max($0.most, $0.now)
                        }
                        gate.wait()
                        running.value.withLock { $0.now -= 1 }
                        return true
                    }
                    if result == nil { refused.value.withLock { $0 += 1 } }
                    return result
                }
            }
            // The first holds the checker until let go; the line fills and the rest are turned away meanwhile.
            while refused.value.withLock({ $0 }) < extra { try await Task.sleep(for: .milliseconds(10)) }
            for _ in 0..<(1 + PasswordChecks.waiting) { gate.signal() }
            var passed = 0
            for try await result in group where result == true { passed += 1 }
            #expect(passed == 1 + PasswordChecks.waiting)
        }
        #expect(running.value.withLock { $0.most } == 1)
        #expect(refused.value.withLock { $0 } == extra)
        // Free again afterwards.
        #expect(try await checks.run { true } == true)
    }

    /// Remote write is off unless `[remote_write] url` is set; a URL that is not http(s) names its line.
    @Test func remoteWriteIsReadAndCheckedWithItsLine() throws {
        #expect(try DaemonConfig.parse(ConfigDocument(text: "", file: "d.toml")).remoteWrite.url == nil)
        let config = try DaemonConfig.parse(
            ConfigDocument(
                text: "[remote_write]\nurl = \"http://127.0.0.1:9090/api/v1/write\"\ninterval = \"5s\"\n",
                file: "d.toml"))
        #expect(config.remoteWrite.url == "http://127.0.0.1:9090/api/v1/write")
        #expect(config.remoteWrite.interval == 5_000 && config.remoteWrite.delay == 60_000)
        #expect(
            throws: ConfigError(
                file: "d.toml", line: 2, key: "remote_write.url",
                "is \"prometheus:9090\"; give an http:// or https:// URL (Prometheus: http://HOST:9090/api/v1/write)")
        ) {
            try DaemonConfig.parse(
                ConfigDocument(text: "[remote_write]\nurl = \"prometheus:9090\"\n", file: "d.toml"))
        }
    }

    /// `[store] postgresql` names a shared database; a URL that is not one, or that holds a password, names its line
    /// and says what to do.
    @Test func aPostgreSQLStoreIsReadAndCheckedWithItsLine() throws {
        #expect(try DaemonConfig.parse(ConfigDocument(text: "", file: "d.toml")).postgres == nil)
        let config = try DaemonConfig.parse(
            ConfigDocument(
                text:
                    "[store]\npostgresql = \"postgresql://netpulse@db.internal:5433/fleet\"\npassword_file = \"/etc/pw\"\n"
                    + "lease = \"5s\"\n",
                file: "d.toml"))
        #expect(
            config.postgres == PostgresLocation(host: "db.internal", port: 5433, user: "netpulse", database: "fleet"))
        #expect(config.postgresPasswordFile == "/etc/pw" && config.leaseLength == 5_000)
        #expect(
            throws: ConfigError(
                file: "d.toml", line: 2, key: "store.postgresql",
                "holds a password; put it in a file named by [store] password_file instead")
        ) {
            try DaemonConfig.parse(
                ConfigDocument(text: "[store]\npostgresql = \"postgresql://u:secret@db/fleet\"\n", file: "d.toml"))
        }
        #expect(throws: ConfigError.self) {
            try DaemonConfig.parse(ConfigDocument(text: "[store]\npostgresql = \"db:5432\"\n", file: "d.toml"))
        }
        #expect(throws: ConfigError.self) {
            try DaemonConfig.parse(ConfigDocument(text: "[store]\npassword_file = \"/etc/pw\"\n", file: "d.toml"))
        }
    }
}

/// A value several tasks of a test share.
final class Guarded<T: Sendable>: Sendable {
    let value: Mutex<T>
    init(_ initial: T) { value = Mutex(initial) }
}

/// `[daemon] time_zone` unset: the zone the store recorded, else the system's; set: it wins and is recorded.
@Suite struct TimeZoneTests {
    let berlin = CivilCalendar(identifier: "Europe/Berlin")!
    let tokyo = CivilCalendar(identifier: "Asia/Tokyo")!

    func config(_ text: String) throws -> DaemonConfig {
        try DaemonConfig.parse(ConfigDocument(text: text, file: "d.toml"))
    }

    @Test func theZoneIsTheFilesElseTheStoresElseTheSystemsAndBillingFollows() throws {
        // A new store: the system's, recorded.
        let fresh = try config("").resolvingTimeZone(recorded: nil, system: tokyo)
        #expect(fresh.config.calendar.name == "Asia/Tokyo" && fresh.config.billing.calendar.name == "Asia/Tokyo")
        #expect(fresh.record == "Asia/Tokyo" && fresh.source.contains("/etc/localtime"))
        // A store that billed in UTC keeps UTC, whatever the system says, and nothing is recorded again.
        let billed = try config("").resolvingTimeZone(recorded: "UTC", system: tokyo)
        #expect(billed.config.calendar.name == "UTC" && billed.record == nil)
        #expect(billed.source.contains("recorded in the store"))
        // The file wins, and is recorded; the log says what the bills were cut in before.
        let set = try config("[daemon]\ntime_zone = \"Europe/Berlin\"\n").resolvingTimeZone(
            recorded: "UTC", system: tokyo)
        #expect(set.config.calendar == berlin && set.config.billing.calendar == berlin && set.record == "Europe/Berlin")
        #expect(set.source.contains("where the store's bills were cut in UTC until now"), "\(set.source)")
        // [billing] time_zone, when set, stays its own.
        let own = try config("[billing]\ntime_zone = \"Europe/Berlin\"\n").resolvingTimeZone(
            recorded: nil, system: tokyo)
        #expect(own.config.calendar == tokyo && own.config.billing.calendar == berlin)
        // A recorded name this system's tz database does not know: the system's, said, and the record kept.
        let unknown = try config("").resolvingTimeZone(recorded: "Mars/Olympus", system: tokyo)
        #expect(unknown.config.calendar == tokyo && unknown.record == nil && unknown.source.contains("Mars/Olympus"))
    }

    @Test func theSystemsZoneIsWhatLocaltimeLinksToAndUTCByAnyName() throws {
        let directory = NSTemporaryDirectory() + "netpulse-zone-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let link = directory + "/localtime"
        try FileManager.default.createSymbolicLink(
            atPath: link, withDestinationPath: "../usr/share/zoneinfo/Europe/Berlin")
        #expect(CivilCalendar.system(localtime: link, timezoneFile: directory + "/none") == berlin)
        try FileManager.default.removeItem(atPath: link)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/usr/share/zoneinfo/Etc/UTC")
        #expect(CivilCalendar.system(localtime: link, timezoneFile: directory + "/none").name == "UTC")
        // A copied file rather than a link: /etc/timezone names it.
        try FileManager.default.removeItem(atPath: link)
        try "Asia/Tokyo\n".write(toFile: directory + "/timezone", atomically: true, encoding: .utf8)
        #expect(CivilCalendar.system(localtime: link, timezoneFile: directory + "/timezone") == tokyo)
        #expect(CivilCalendar.system(localtime: link, timezoneFile: directory + "/none") == .utc)
    }
}
