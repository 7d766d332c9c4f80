import ArgumentParser
import PulseQuery

/// The top talkers: interfaces, hosts or groups ranked by bytes, peak rate, 95th percentile or error ratio.
struct Top: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Top interfaces, hosts or groups by bytes, peak rate, 95th percentile or error ratio.",
        discussion: """
            Interfaces are those the scope of the other options counts, the scope traffic and bill take: the \
            fleet's without options, the host's with --agent, the group's with --group (no loopback, veth or bond \
            slave). --interface names interfaces whatever their kind ('*' for all).
            """)

    @OptionGroup var options: QueryOptions

    @Option(name: .long, help: "bytes, peak, p95 or errors.")
    var by = Ranking.bytes

    @Option(name: .long, help: "How many.")
    var top = 10

    @Option(name: .long, help: "Rank interfaces, hosts or groups.")
    var scope = ScopeChoice.interface

    func run() async throws {
        try await options.run(.top, [("by", by.rawValue), ("top", "\(top)"), ("scope", scope.rawValue)])
    }
}

extension Ranking: ExpressibleByArgument {}
