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
           netpulse-agent request [--config <path>] [--out <file>] [--group <name>]

    Sample this host's network interface counters and push them to netpulsed over mutual TLS.

    OPTIONS:
      -c, --config <path>     The agent config file. (default: /etc/netpulse/agent.toml)
      --check                 Check the config file and exit.
      --log-level <level>     trace, debug, info, notice, warning, error or critical. (default: info)
      --version               Show the version.
      -h, --help              Show help information.

    REQUEST: make this host's key (the config's [daemon] key, unless there is one) and a certificate request for
    its [agent] id, for `netpulse ca sign` on the CA's host; the key never leaves this host.
      --out <file>            Where to write the request. (default: NAME.csr beside the key)
      --group <name>          The group that may read a new key (0640). (default: netpulse-agents, if it exists)
    """

/// The config at `path`, or exit 2 (a bad config: systemd does not restart the service for it) saying why.
func loadConfig(_ path: String) -> AgentConfig {
    do {
        return try AgentConfig.load(path: path)
    } catch {
        printError("netpulse-agent: \(error)")
        exit(2)
    }
}

/// `netpulse-agent request`: the key and a request for it; exits.
func request(_ arguments: ArraySlice<String>) -> Never {
    var arguments = arguments
    var configPath = "/etc/netpulse/agent.toml"
    var out: String?
    var group: String?
    while let argument = arguments.popFirst() {
        guard ["-c", "--config", "--out", "--group"].contains(argument) else {
            printError("netpulse-agent: error: unknown argument '\(argument)' for request\n\(usage)")
            exit(64)
        }
        guard let value = arguments.popFirst() else {
            printError("netpulse-agent: error: missing value for '\(argument)'\n\(usage)")
            exit(64)
        }
        switch argument {
        case "--out": out = value
        case "--group": group = value
        default: configPath = value
        }
    }
    let config = loadConfig(configPath)
    // The agents' group reads their keys (the unit's SupplementaryGroups), when this host has it.
    let groupName = group ?? "netpulse-agents"
    let keyGroup = getgrnam(groupName).map { $0.pointee.gr_gid }
    if group != nil, keyGroup == nil {
        printError("netpulse-agent: there is no group \(groupName) on this host (groupadd --system \(groupName))")
        exit(2)
    }
    let key = config.tls.key
    let directory = key.contains("/") ? String(key[..<key.lastIndex(of: "/")!]) : "."
    let written: CertificateRequest.Written
    do {
        written = try CertificateRequest.write(
            name: config.agentID, keyPath: key, requestPath: out ?? "\(directory)/\(config.agentID).csr",
            keyGroup: keyGroup)
    } catch {
        printError("netpulse-agent: \(error)")
        exit(1)
    }
    print(
        written.keyCreated
            ? "made a key: \(key)\(keyGroup != nil ? "  (readable by group \(groupName))" : "")"
            : "kept the key: \(key)")
    print("wrote a request for agent '\(config.agentID)': \(written.requestPath)")
    print("next: on the CA's host, netpulse ca sign \(config.agentID).csr; bring \(config.agentID).pem back here as")
    print("  \(config.tls.certificate) (the [daemon] certificate of \(configPath)), then start or reload the agent")
    exit(0)
}

var configPath = "/etc/netpulse/agent.toml"
var checkOnly = false
var logLevel = Logger.Level.info
var arguments = CommandLine.arguments.dropFirst()
if arguments.first == "request" { request(arguments.dropFirst()) }
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

let config = loadConfig(configPath)
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
