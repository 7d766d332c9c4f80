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
        subcommands: [List.self, Events.self, SilenceCommand.self, Expire.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pending and firing alerts, the events of the last --since, and the silences in force.")

        @OptionGroup var location: StoreLocation

        @Option(name: .long, help: "table or json.")
        var format = QueryOptions.Format.table

        @OptionGroup var window: EventWindow

        @OptionGroup var remote: DaemonOption

        func run() async throws {
            try await location.run(.alerts, window.parameters(format: format), daemon: remote.url)
        }
    }

    struct Events: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The alerts' transitions (pending, firing, resolved) of the last --since, newest first.")

        @OptionGroup var location: StoreLocation

        @Option(name: .long, help: "table, json or csv.")
        var format = QueryOptions.Format.table

        @OptionGroup var window: EventWindow

        @OptionGroup var remote: DaemonOption

        func run() async throws {
            try await location.run(.events, window.parameters(format: format), daemon: remote.url)
        }
    }

    /// Which events a listing shows (``AlertsRead``).
    struct EventWindow: ParsableArguments {
        @Option(name: .long, help: "How far back the events go: 1h, 24h, 7d.")
        var since = "24h"

        @Option(name: .long, help: "At most this many events (up to 10000).")
        var limit = 50

        func parameters(format: QueryOptions.Format) -> ReadParameters {
            ReadParameters([("format", format.rawValue), ("since", since), ("limit", "\(limit)")])
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

        @OptionGroup var remote: DaemonOption

        func run() async throws {
            try await reportingErrors {
                var matchers = [String: String]()
                for text in match {
                    guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
                        throw QueryError("--match \(text): use name=glob, such as host=web-*")
                    }
                    let name = String(text[..<equals])
                    guard matchers[name] == nil else { throw QueryError("--match \(name) is given twice") }
                    matchers[name] = String(text[text.index(after: equals)...])
                }
                let environment = ProcessInfo.processInfo.environment
                let request = try SilenceRequest(
                    matchers: matchers, for: duration, comment: comment,
                    author: author ?? environment["SUDO_USER"] ?? environment["USER"] ?? "netpulse")
                if let url = remote.url {
                    let answer = try await DaemonClient(url: url).silence(request)
                    print(answer.id)
                    printError("silenced \(AlertListing.matchersText(matchers)) until \(answer.until)")
                    return
                }
                let (daemon, store) = try await location.openZoned(access: .editor)
                let silence = request.silence(id: UUID().uuidString.lowercased(), now: Netpulse.clock.now())
                try await store.saveSilence(silence)
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

        @OptionGroup var remote: DaemonOption

        func run() async throws {
            try await reportingErrors {
                if let url = remote.url {
                    try await DaemonClient(url: url).expireSilence(id)
                    printError("silence \(id) ended")
                    return
                }
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
