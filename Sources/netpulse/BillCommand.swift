import ArgumentParser
import PulseQuery

/// 95th-percentile bills, as a carrier computes them.
struct BillCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bill",
        abstract: "95th-percentile bills of the fleet, groups, hosts or interfaces for a billing period.",
        discussion: """
            The 5-minute rates of the period in ascending order, the value at the rank round(0.95 × n) (or \
            ⌈0.95 × n⌉ with rank = "nearest-rank"). Each bill says how many intervals were measured, interpolated \
            from short gaps, missing (excluded, never zero) and flagged (an implausible step), and the rank it took. \
            Methods, billing days and which intervals count come from [billing] (docs/windows.md).
            """)

    @OptionGroup var options: QueryOptions

    @Option(name: .long, help: "current, previous, or a month (2026-10): the period that starts in it.")
    var period = "current"

    @Option(name: .long, help: "Bill the fleet, groups, hosts or interfaces (default: from the other options).")
    var scope: ScopeChoice?

    @Flag(
        name: .long,
        help:
            "Also say what each bill's scope was over its period: counted interfaces and link speed as of its steps, and the hosts in it then."
    )
    var members = false

    func validate() throws {
        try options.refuseTimeRange(
            "bill", because: "a bill covers a billing period; choose it with --period (current, previous or 2026-10)")
    }

    func run() async throws {
        try await options.run(
            .bill, [("period", period), ("scope", scope?.rawValue), ("members", members ? "true" : nil)])
    }
}
