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

    /// `netpulse --daemon URL COMMAND …` is `netpulse COMMAND … --daemon URL`: the option belongs to the query
    /// commands, and may come before the command's name as it does with kubectl's `--server`.
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if let first = arguments.first, first == "--daemon" || first.hasPrefix("--daemon=") {
            let taken = first == "--daemon" ? Array(arguments.prefix(2)) : [first]
            arguments.removeFirst(taken.count)
            arguments += taken
        }
        await main(arguments)
    }

    /// The wall clock the commands read the time from: the system's. (Tests step the clocks of the daemon and the
    /// agent, which date what is stored; a command reads the time once, for its windows' ends.)
    static let clock = WallClock.system
}

/// Runs a command's body, turning any error it throws into one line on stderr and a non-zero exit; an exit it
/// asks for, or a usage error (which ArgumentParser prints with the usage), passes through.
func reportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as ExitCode {
        throw error
    } catch let error as ValidationError {
        throw error
    } catch {
        throw fail(error)
    }
}

/// Turns a library error into one line on stderr and a non-zero exit.
func fail(_ error: any Error, code: Int32 = 1) -> ExitCode {
    printError("netpulse: \(error)")
    return ExitCode(code)
}
