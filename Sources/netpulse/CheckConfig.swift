import ArgumentParser
import PulseAgent
import PulseCore
import PulseDaemon
import PulseStore

struct CheckConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check an agent or daemon config file: syntax, known keys, values and referenced files.")

    @Argument(help: "The config file.")
    var file: String

    @Option(name: .long, help: "agent or daemon (default: guessed from the tables in the file).")
    var kind: String?

    func run() throws {
        let document: ConfigDocument
        do {
            document = try ConfigDocument(contentsOf: file)
        } catch {
            throw fail(error, code: 2)
        }
        let isDaemon: Bool
        switch kind {
        case "daemon": isDaemon = true
        case "agent": isDaemon = false
        case nil:
            let daemonTables: Set<String> = [
                "listen", "store", "tls", "ingest", "rollups", "retention", "billing", "snapshots", "dashboards",
                "aggregation",
            ]
            isDaemon = document.tables.keys.contains { daemonTables.contains($0) }
        default:
            throw ValidationError("--kind must be agent or daemon")
        }
        do {
            let tls: TLSFiles
            if isDaemon {
                let config = try DaemonConfig.parse(document)
                tls = config.tls
                _ = try TLSSetup.server(tls)
                // The files of TLS to PostgreSQL too (the server itself is not contacted).
                try config.postgres?.tls.validate()
            } else {
                let config = try AgentConfig.parse(document)
                tls = config.tls
                _ = try TLSSetup.client(tls)
            }
            print("\(file): OK (\(isDaemon ? "daemon" : "agent") config; certificates load)")
            if isDaemon {
                let config = try DaemonConfig.parse(document)
                for warning in config.warnings { printError("netpulse: warning: \(warning)") }
                if let location = try config.postgresLocation() { reportReplication(location) }
            }
        } catch {
            throw fail(error, code: 2)
        }
    }

    /// What a PostgreSQL deployment must set to lose no acknowledged batch on a failover, and whether the server
    /// does (when it can be reached now; an unreachable server is not a config error).
    func reportReplication(_ location: PostgresLocation) {
        print("PostgreSQL: \(PostgresReplication.requirement)")
        do {
            let replication = try PostgresReplication.read(location: location)
            print("\(location): \(replication.summary)")
            if let warning = replication.warning { printError("netpulse: warning: \(warning)") }
        } catch {
            print("\(location): not checked now (\(error))")
        }
    }
}
