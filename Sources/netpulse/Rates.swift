import ArgumentParser

/// Each interface's current rates and today's totals, from the rollups (no raw data is decoded).
struct Rates: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Each interface's current rates and today's totals, read from the daemon's rollups.",
        discussion: """
            The rate is the newest bucket of the finest rollup level (1 minute) over the time its samples cover.
            """)

    @OptionGroup var options: QueryOptions

    func validate() throws {
        try options.refuseTimeRange(
            "rates",
            because: "it shows each interface's rate now and today's totals (netpulse traffic and top take a range)")
    }

    func run() async throws {
        try await options.run(.rates)
    }
}
