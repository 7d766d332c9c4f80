import ArgumentParser
import Logging
import PulseAgent
import PulseCore
import ServiceLifecycle

@main
struct AgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "netpulse-agent",
        abstract: "Sample this host's network interface counters and push them to netpulsed over mutual TLS.",
        version: NetpulseVersion.string)

    @Option(name: .shortAndLong, help: "The agent config file.")
    var config: String = "/etc/netpulse/agent.toml"

    @Flag(name: .long, help: "Check the config file and exit.")
    var check = false

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    func run() async throws {
        let loaded: AgentConfig
        do {
            loaded = try AgentConfig.load(path: config)
        } catch {
            printError("netpulse-agent: \(error)")
            throw ExitCode(2)
        }
        if check {
            print("\(config): OK")
            return
        }
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "netpulse-agent")
        let service = AgentService(config: loaded, logger: logger)
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: service)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch {
            printError("netpulse-agent: \(error)")
            throw ExitCode(1)
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
