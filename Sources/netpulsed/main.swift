import ArgumentParser
import Logging
import PulseCore
import PulseDaemon
import PulseSettings
import PulseSystemd

@main
struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "netpulsed",
        abstract: "Accept Netpulse agents over mutual TLS and store their points durably.",
        version: NetpulseVersion.string)

    @Option(name: .shortAndLong, help: "The daemon config file.")
    var config: String = "/etc/netpulse/netpulsed.toml"

    @Flag(name: .long, help: "Check the config file and exit.")
    var check = false

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    func run() async throws {
        let loaded: DaemonConfig
        do {
            loaded = try DaemonConfig.load(path: config)
        } catch {
            printError("netpulsed: \(error)")
            throw ExitCode(2)
        }
        if check {
            print("\(config): OK")
            return
        }
        JournalLogHandler.bootstrapLogging(identifier: "netpulsed", level: logLevel)
        let logger = Logger(label: "netpulsed")
        if let refused = ThreadPriority.prepare() {
            logger.notice(
                "ingest runs at the priority of drawing and billing: its threads cannot be raised (\(refused)); allow it with LimitNICE=-5 in the unit, as the shipped one does"
            )
        }
        if !ThreadPriority.shortensSlices {
            logger.notice(
                "ingest's threads keep the kernel's default scheduling slice (a slice per thread needs Linux 6.12 or later, and sched_setattr allowed): an acknowledgement may wait for drawing's slice of the CPU"
            )
        }
        let (clock, faults) = ProcessSeams.read()
        do {
            // Opening the store may migrate and backfill one written by an older version (logged when it does).
            let runtime = try await DaemonRuntime(
                config: loaded, configPath: config, logger: logger, clock: clock, faults: faults)
            try await runtime.run()
        } catch {
            logger.critical("cannot run: \(error)")
            throw ExitCode(1)
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
