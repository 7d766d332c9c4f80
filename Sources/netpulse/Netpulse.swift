import ArgumentParser
import PulseCore

@main
struct Netpulse: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "netpulse",
        abstract: "Operate Netpulse: certificates, config checks, and what the daemon has stored.",
        version: NetpulseVersion.string,
        subcommands: [CA.self, CheckConfig.self, Rates.self])
}

/// Turns a library error into one line on stderr and a non-zero exit.
func fail(_ error: any Error, code: Int32 = 1) -> ExitCode {
    printError("netpulse: \(error)")
    return ExitCode(code)
}
