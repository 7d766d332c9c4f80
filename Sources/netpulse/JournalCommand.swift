import ArgumentParser
import PulseAnalytics
import PulseCore
import PulseFormats
import PulseQuery
import PulseStore
import PulseStoreBackends

/// The daemon's ingest journal (SQLite stores): what waits to be applied, and what was set aside.
struct JournalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "journal",
        abstract: "Inspect the daemon's ingest journal: batches acknowledged and set aside instead of applied.",
        subcommands: [Show.self])

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the journal entries set aside, and why (or one entry's batch with --entry).",
            discussion: """
                An entry is set aside when the store refuses its batch as breaking one of its rules, when its bytes \
                cannot be read, or when the daemon stopped twice while applying it (docs/reliability.md). Each \
                was acknowledged: it is kept in the journal file for inspection, never deleted.
                """)

        @OptionGroup var location: StoreLocation

        @Option(name: .long, help: "Show this entry's batch: agent, stream, sequence, interfaces and times.")
        var entry: Int64?

        @Option(name: .long, help: "table or json.")
        var format = QueryOptions.Format.table

        func run() async throws {
            try await reportingErrors {
                let daemon = try location.daemonConfig()
                guard try location.store != nil || daemon.postgresLocation() == nil else {
                    throw QueryError("the daemon stores in PostgreSQL, which needs no journal: nothing to show")
                }
                let path = StoreBackends.journalPath(forStore: location.store ?? daemon.storePath)
                let (entries, waiting) = try StoreBackends.inspectJournal(path: path)
                if let wanted = entry {
                    guard let found = entries.first(where: { $0.id == wanted }) else {
                        throw QueryError("\(path) has no entry \(wanted) set aside")
                    }
                    print(format == .json ? Self.json([found], waiting: waiting, detail: true) : Self.detail(found))
                    return
                }
                switch format {
                case .json: print(Self.json(entries, waiting: waiting, detail: false))
                default:
                    print(
                        "\(path): \(waiting) entr\(waiting == 1 ? "y" : "ies") waiting to be applied, \(entries.count) set aside"
                    )
                    guard !entries.isEmpty else { return }
                    var lines = [["ENTRY", "RECEIVED (UTC)", "AGENT", "SEQUENCE", "STREAM", "REASON"]]
                    for item in entries {
                        lines.append([
                            "\(item.id)", RFC3339.text(item.receivedAt),
                            TerminalText.safe(item.batch?.agent.name ?? "?"),
                            item.batch.map { "\($0.sequence)" } ?? "?",
                            item.batch.map { Hex.string($0.stream, width: 16) } ?? "?", TerminalText.safe(item.reason),
                        ])
                    }
                    print(TerminalText.table(lines, numeric: [0, 3]), terminator: "")
                }
            }
        }

        /// One entry for a person; every text an agent chose is made safe for a terminal.
        static func detail(_ item: SetAsideEntry) -> String {
            let safe = TerminalText.safe
            var out = "entry \(item.id), received \(RFC3339.text(item.receivedAt)), set aside: \(safe(item.reason))\n"
            guard let batch = item.batch else { return out + "its bytes cannot be read: \(safe(item.damage ?? "?"))\n" }
            out += "agent \(safe(batch.agent.name)) (\(safe(batch.agent.hostname)), version "
            out += "\(safe(batch.agent.version))), stream \(Hex.string(batch.stream, width: 16)), "
            out += "sequence \(batch.sequence), order \(batch.order)\n"
            out += "interval \(Units.formatDuration(batch.interval)), \(batch.sections.count) interface(s):\n"
            for section in batch.sections {
                let times = section.timestamps
                out += "  \(safe(section.descriptor.name.description)): \(times.count) sample(s)"
                if let first = times.first, let last = times.last {
                    out += " from \(first) ms to \(last) ms"
                }
                out += "\n"
            }
            return out
        }

        static func json(_ entries: [SetAsideEntry], waiting: Int, detail: Bool) -> String {
            JSONText.object([
                ("waiting", "\(waiting)"),
                (
                    "set_aside",
                    JSONText.array(
                        entries.map { item in
                            var fields: [(String, String)] = [
                                ("entry", "\(item.id)"),
                                ("received_at", JSONText.string(RFC3339.text(item.receivedAt))),
                                ("reason", JSONText.string(item.reason)),
                            ]
                            if let batch = item.batch {
                                fields += [
                                    ("agent", JSONText.string(batch.agent.name)),
                                    ("stream", JSONText.string(Hex.string(batch.stream, width: 16))),
                                    ("sequence", "\(batch.sequence)"), ("order", "\(batch.order)"),
                                ]
                                if detail {
                                    fields.append(
                                        (
                                            "interfaces",
                                            JSONText.array(
                                                batch.sections.map { section in
                                                    JSONText.object([
                                                        ("name", JSONText.string(section.descriptor.name.description)),
                                                        (
                                                            "timestamps",
                                                            JSONText.array(section.timestamps.map { "\($0)" })
                                                        ),
                                                    ])
                                                })
                                        ))
                                }
                            } else {
                                fields.append(("damage", JSONText.string(item.damage ?? "")))
                            }
                            return JSONText.object(fields)
                        })
                ),
            ])
        }
    }
}
