import ArgumentParser
import Foundation
import PulseAnalytics
import PulseCore
import PulseQuery
import PulseSettings
import PulseStore

/// `netpulse alerts`: what is pending and firing, what happened lately, and silences — read from the daemon's
/// store, so it shows what the daemon decided (and a second daemon or a report sees the same).
struct AlertsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "alerts",
        abstract: "List current and recent alerts; silence them or end a silence.",
        subcommands: [List.self, SilenceCommand.self, Expire.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pending and firing alerts, the events of the last --since, and the silences in force.")

        @OptionGroup var location: StoreLocation

        @Option(name: .long, help: "table or json.")
        var format = QueryOptions.Format.table

        @Option(name: .long, help: "How far back the recent events go: 1h, 24h, 7d.")
        var since = "24h"

        @Option(name: .long, help: "At most this many recent events.")
        var limit = 50

        func run() async throws {
            try await runAlerts {
                guard format != .csv else { throw QueryError("--format: alerts are listed as table or json") }
                guard let back = Units.parseDuration(since), back > 0 else {
                    throw QueryError("--since \(since): not a duration; use 1h, 24h or 7d")
                }
                guard limit >= 1 else { throw QueryError("--limit must be at least 1") }
                let now = WallClock.milliseconds()
                let daemon = try location.daemonConfig()
                let store = try await location.open(daemon)
                let listing = AlertListing(
                    now: now, rules: Dictionary(daemon.alerts.rules.map { ($0.name, $0) }) { first, _ in first },
                    instances: try await store.alertInstances(),
                    events: try await store.alertEvents(since: now - back, limit: limit),
                    silences: try await store.silences().filter { $0.endsAt > now },
                    queued: try await store.queuedNotificationCount())
                print(format == .json ? listing.json : listing.table(daemon.calendar), terminator: "")
            }
        }
    }

    struct SilenceCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "silence",
            abstract: "Keep alerts whose labels match out of notifications for a while (they are still evaluated).")

        @OptionGroup var location: StoreLocation

        @Option(name: .long, help: "A label and a glob of its value, as name=glob (host=web-*); repeat for more.")
        var match: [String] = []

        @Option(name: .customLong("for"), help: "How long: 30m, 2h, 7d.")
        var duration: String

        @Option(name: .long, help: "Why (shown in listings).")
        var comment = ""

        @Option(name: .long, help: "Who (default: the user running the command).")
        var author: String?

        func run() async throws {
            try await runAlerts {
                guard !match.isEmpty else {
                    throw QueryError("--match: name at least one label, such as --match alertname=UplinkBusy")
                }
                var matchers = [String: String]()
                for text in match {
                    guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
                        throw QueryError("--match \(text): use name=glob, such as host=web-*")
                    }
                    let name = String(text[..<equals])
                    guard matchers[name] == nil else { throw QueryError("--match \(name) is given twice") }
                    matchers[name] = String(text[text.index(after: equals)...])
                }
                guard let length = Units.parseDuration(duration), length > 0 else {
                    throw QueryError("--for \(duration): not a duration; use 30m, 2h or 7d")
                }
                let now = WallClock.milliseconds()
                let environment = ProcessInfo.processInfo.environment
                let silence = Silence(
                    id: UUID().uuidString.lowercased(), matchers: matchers, startsAt: now, endsAt: now + length,
                    createdBy: author ?? environment["SUDO_USER"] ?? environment["USER"] ?? "netpulse",
                    comment: comment)
                let daemon = try location.daemonConfig()
                try await location.open(daemon, access: .editor).saveSilence(silence)
                print(silence.id)
                printError(
                    "silenced \(AlertListing.matchersText(matchers)) until \(daemon.calendar.localText(silence.endsAt))"
                )
            }
        }
    }

    struct Expire: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "End a silence now.")

        @OptionGroup var location: StoreLocation

        @Argument(help: "The silence's id (from `netpulse alerts silence` or the listing).")
        var id: String

        func run() async throws {
            try await runAlerts {
                let daemon = try location.daemonConfig()
                let store = try await location.open(daemon, access: .editor)
                guard try await store.expireSilence(id: id, at: WallClock.milliseconds()) else {
                    throw QueryError("no silence \(id); `netpulse alerts` lists them")
                }
                printError("silence \(id) ended")
            }
        }
    }
}

/// Errors as one line and a non-zero exit, as the query commands do.
private func runAlerts(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as ExitCode {
        throw error
    } catch {
        throw fail(error)
    }
}

/// What `netpulse alerts` prints.
struct AlertListing {
    var now: Int64
    var rules: [String: AlertRule]
    var instances: [AlertInstance]
    var events: [AlertEvent]
    var silences: [Silence]
    var queued: Int

    /// Firing before pending, then the oldest first.
    var current: [AlertInstance] {
        instances.sorted {
            ($0.phase.status == .firing ? 0 : 1, $0.phase.activeSince, $0.rule, $0.fingerprint)
                < ($1.phase.status == .firing ? 0 : 1, $1.phase.activeSince, $1.rule, $1.fingerprint)
        }
    }

    func silencedBy(_ labels: [String: String]) -> [String] {
        silences.filter { $0.isActive(at: now) && $0.matches(labels) }.map(\.id)
    }

    func valueText(_ rule: String, _ value: Double?) -> String {
        guard let value else { return "no data" }
        return rules[rule]?.condition.metric.format(value) ?? "\(value)"
    }

    /// What an alert watches: its host, interface or group, or the fleet.
    static func target(_ labels: [String: String]) -> String {
        let parts = ["host", "interface", "group"].compactMap { labels[$0] }
        return parts.isEmpty ? "fleet" : parts.joined(separator: " ")
    }

    static func matchersText(_ matchers: [String: String]) -> String {
        matchers.sorted { $0.key < $1.key }.map { "\($0.key)=\(JSONText.string($0.value))" }.joined(
            separator: ", ")
    }

    func table(_ calendar: CivilCalendar) -> String {
        var out = ""
        if current.isEmpty {
            out += "no alerts pending or firing\n"
        } else {
            var rows = [["STATUS", "SINCE", "RULE", "SEVERITY", "TARGET", "VALUE", "SILENCED"]]
            for instance in current {
                rows.append([
                    instance.phase.status.rawValue,
                    calendar.localText(instance.phase.firedAt ?? instance.phase.activeSince),
                    TerminalText.safe(instance.rule), TerminalText.safe(instance.labels["severity"] ?? ""),
                    TerminalText.safe(Self.target(instance.labels)), valueText(instance.rule, instance.value),
                    silencedBy(instance.labels).isEmpty ? "" : "yes",
                ])
            }
            out += TerminalText.table(rows, numeric: [])
        }
        if !events.isEmpty {
            out += "\nrecent events, newest first\n"
            var rows = [["TIME", "STATUS", "RULE", "TARGET", "VALUE", "CHART"]]
            for event in events {
                rows.append([
                    calendar.localText(event.at), event.status.rawValue, TerminalText.safe(event.rule),
                    TerminalText.safe(Self.target(event.labels)), valueText(event.rule, event.value),
                    TerminalText.safe(event.chart ?? ""),
                ])
            }
            out += TerminalText.table(rows, numeric: [])
        }
        if !silences.isEmpty {
            out += "\nsilences\n"
            var rows = [["ID", "MATCHERS", "FROM", "UNTIL", "BY", "COMMENT"]]
            for silence in silences.sorted(by: { $0.endsAt < $1.endsAt }) {
                rows.append([
                    silence.id, TerminalText.safe(Self.matchersText(silence.matchers)),
                    calendar.localText(silence.startsAt), calendar.localText(silence.endsAt),
                    TerminalText.safe(silence.createdBy), TerminalText.safe(silence.comment),
                ])
            }
            out += TerminalText.table(rows, numeric: [])
        }
        if queued > 0 { out += "\n\(queued) notification(s) waiting for delivery\n" }
        return out
    }

    var json: String {
        JSONText.object([
            ("now", JSONText.string(RFC3339.text(now))),
            (
                "alerts",
                JSONText.array(
                    current.map { instance in
                        JSONText.object([
                            ("rule", JSONText.string(instance.rule)),
                            ("status", JSONText.string(instance.phase.status.rawValue)),
                            ("fingerprint", JSONText.string(instance.fingerprint)),
                            ("activeSince", JSONText.string(RFC3339.text(instance.phase.activeSince))),
                            ("firingSince", Self.time(instance.phase.firedAt)),
                            ("value", Self.number(instance.value)),
                            ("valueText", JSONText.string(valueText(instance.rule, instance.value))),
                            ("evaluatedAt", JSONText.string(RFC3339.text(instance.evaluatedAt))),
                            ("labels", Self.map(instance.labels)), ("annotations", Self.map(instance.annotations)),
                            ("silencedBy", JSONText.array(silencedBy(instance.labels).map(JSONText.string))),
                        ])
                    })
            ),
            (
                "events",
                JSONText.array(
                    events.map { event in
                        JSONText.object([
                            ("id", "\(event.id)"), ("rule", JSONText.string(event.rule)),
                            ("status", JSONText.string(event.status.rawValue)),
                            ("at", JSONText.string(RFC3339.text(event.at))), ("value", Self.number(event.value)),
                            ("valueText", JSONText.string(valueText(event.rule, event.value))),
                            ("fingerprint", JSONText.string(event.fingerprint)),
                            ("startsAt", JSONText.string(RFC3339.text(event.startsAt))),
                            ("endsAt", Self.time(event.endsAt)), ("labels", Self.map(event.labels)),
                            ("annotations", Self.map(event.annotations)),
                            ("chart", event.chart.map(JSONText.string) ?? "null"),
                        ])
                    })
            ),
            (
                "silences",
                JSONText.array(
                    silences.map { silence in
                        JSONText.object([
                            ("id", JSONText.string(silence.id)), ("matchers", Self.map(silence.matchers)),
                            ("startsAt", JSONText.string(RFC3339.text(silence.startsAt))),
                            ("endsAt", JSONText.string(RFC3339.text(silence.endsAt))),
                            ("createdBy", JSONText.string(silence.createdBy)),
                            ("comment", JSONText.string(silence.comment)),
                            ("active", silence.isActive(at: now) ? "true" : "false"),
                        ])
                    })
            ),
            ("queuedNotifications", "\(queued)"),
        ]) + "\n"
    }

    static func map(_ pairs: [String: String]) -> String {
        JSONText.object(pairs.sorted { $0.key < $1.key }.map { ($0.key, JSONText.string($0.value)) })
    }

    static func time(_ value: Int64?) -> String { value.map { JSONText.string(RFC3339.text($0)) } ?? "null" }

    static func number(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "null" }
        return "\(value)"
    }
}
