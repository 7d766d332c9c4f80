import ArgumentParser
import PulseQuery

/// vnStat's views: traffic per 5 minutes, hour, day, month or year, for the fleet, a group, a host or interfaces.
struct Traffic: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Traffic per 5 minutes, hour, day, month or year (like vnstat -5/-h/-d/-m/-y).",
        discussion: """
            Without --agent, --interface or --group it shows the fleet (counted interfaces of every host); with
            --agent the host, with --interface each matching interface, with --group the group.
            """)

    @OptionGroup var options: QueryOptions

    @Option(name: .long, help: "5min, hour, day, month or year.")
    var by = TrafficUnit.day

    @Option(name: .long, help: "Show interfaces, hosts, groups or the fleet (default: from the other options).")
    var scope: ScopeChoice?

    func run() async throws {
        try await options.run(.traffic, [("by", by.rawValue), ("scope", scope?.rawValue)])
    }
}

extension TrafficUnit: ExpressibleByArgument {}
extension ScopeChoice: ExpressibleByArgument {}
