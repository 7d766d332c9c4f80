import Logging
import PulseAgent
import PulseCore
import PulseSystemd

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// The agent parses its few options by hand: swift-argument-parser brings FoundationEssentials and the regex
// libraries, several MiB of code that would be mapped into every host's agent for five flags.
let usage = """
    USAGE: netpulse-agent [--config <path>] [--check] [--log-level <level>]

    Sample this host's network interface counters and push them to netpulsed over mutual TLS.

    OPTIONS:
      -c, --config <path>     The agent config file. (default: /etc/netpulse/agent.toml)
      --check                 Check the config file and exit.
      --log-level <level>     trace, debug, info, notice, warning, error or critical. (default: info)
      --version               Show the version.
      -h, --help              Show help information.
    """

var configPath = "/etc/netpulse/agent.toml"
var checkOnly = false
var logLevel = Logger.Level.info
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "-c", "--config":
        guard let value = arguments.popFirst() else {
            printError("netpulse-agent: error: missing value for '\(argument)'\n\(usage)")
            exit(64)
        }
        configPath = value
    case "--check":
        checkOnly = true
    case "--log-level":
        guard let value = arguments.popFirst(), let level = Logger.Level(rawValue: value) else {
            printError(
                "netpulse-agent: error: --log-level needs one of trace, debug, info, notice, warning, error, critical")
            exit(64)
        }
        logLevel = level
    case "--version":
        print(NetpulseVersion.string)
        exit(0)
    case "-h", "--help":
        print(usage)
        exit(0)
    default:
        printError("netpulse-agent: error: unknown argument '\(argument)'\n\(usage)")
        exit(64)
    }
}

let config: AgentConfig
do {
    config = try AgentConfig.load(path: configPath)
} catch {
    printError("netpulse-agent: \(error)")
    exit(2)
}
if checkOnly {
    print("\(configPath): OK")
    exit(0)
}
JournalLogHandler.bootstrapLogging(identifier: "netpulse-agent", level: logLevel)
let logger = Logger(label: "netpulse-agent")
let (clock, faults) = ProcessSeams.read()
do {
    try await AgentService(config: config, configPath: configPath, logger: logger, clock: clock, faults: faults).run()
} catch {
    logger.critical("cannot start: \(error)")
    exit(1)
}
