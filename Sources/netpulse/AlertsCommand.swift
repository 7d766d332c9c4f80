import ArgumentParser
import Foundation
import PulseAnalytics
import PulseCore
import PulseFormats
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
            try await reportingErrors {
                guard format != .csv else { throw QueryError("--format: alerts are listed as table or json") }
                guard let back = Units.parseDuration(since), back > 0 else {
                    throw QueryError("--since \(since): not a duration; use 1h, 24h or 7d")
                }
                guard limit >= 1 else { throw QueryError("--limit must be at least 1") }
                let now = Netpulse.clock.now()
                let daemon = try location.daemonConfig()
                let store = try await location.open(daemon)
                let state = try await AlertStateQuery(store: store).read(now: now, since: now - back, limit: limit)
                let listing = AlertListing(
                    now: now, rules: Dictionary(daemon.alerts.rules.map { ($0.name, $0) }) { first, _ in first },
                    instances: state.instances, events: state.events, silences: state.silences, queued: state.queued)
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
            try await reportingErrors {
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
                let now = Netpulse.clock.now()
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
            try await reportingErrors {
                let daemon = try location.daemonConfig()
                let store = try await location.open(daemon, access: .editor)
                guard try await store.expireSilence(id: id, at: Netpulse.clock.now()) else {
                    throw QueryError("no silence \(id); `netpulse alerts` lists them")
                }
                printError("silence \(id) ended")
            }
        }
    }
}
