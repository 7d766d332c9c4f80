import ArgumentParser
import PulseCore

@main
struct Netpulse: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "netpulse",
        abstract: "Operate Netpulse: certificates, config checks, traffic, top talkers, bills, exports and alerts.",
        version: NetpulseVersion.string,
        subcommands: [
            CA.self, CheckConfig.self, Rates.self, Traffic.self, Top.self, BillCommand.self, Export.self,
            SnapshotCommand.self, AlertsCommand.self, ReportCommand.self, JournalCommand.self,
        ])
}

/// Turns a library error into one line on stderr and a non-zero exit.
func fail(_ error: any Error, code: Int32 = 1) -> ExitCode {
    printError("netpulse: \(error)")
    return ExitCode(code)
}
