import ArgumentParser
import PulseAgent
import PulseCertificates
import PulseCore
import PulseSettings
import PulseStore
import PulseStoreBackends

struct CheckConfig: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check an agent or daemon config file: syntax, known keys, values and referenced files.")

    @Argument(help: "The config file.")
    var file: String

    @Option(name: .long, help: "agent or daemon (default: guessed from the tables in the file).")
    var kind: String?

    func run() async throws {
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
            var daemon: DaemonConfig?
            if isDaemon {
                let config = try DaemonConfig.parse(document)
                _ = try TLSSetup.server(config.tls)
                // The CA and revocation list the daemon checks client certificates against, as it reads them.
                _ = try ClientCertificateCheck.load(ca: config.tls.ca, revoked: config.revoked)
                // The files of TLS to PostgreSQL too (the server is contacted only below, for its replication).
                if let location = config.postgres { try StoreBackends.checkTLSFiles(of: location) }
                daemon = config
            } else {
                let config = try AgentConfig.parse(document)
                _ = try TLSSetup.client(config.tls)
            }
            print("\(file): OK (\(isDaemon ? "daemon" : "agent") config; certificates load)")
            if let daemon {
                for warning in daemon.warnings { printError("netpulse: warning: \(warning)") }
                if let location = try daemon.postgresLocation() { await reportReplication(location) }
            }
        } catch {
            throw fail(error, code: 2)
        }
    }

    /// What a PostgreSQL deployment must set to lose no acknowledged batch on a failover, and whether the server
    /// does (when it can be reached now; an unreachable server is not a config error).
    func reportReplication(_ location: PostgresLocation) async {
        print("PostgreSQL: \(PostgresReplication.requirement)")
        do {
            let replication = try await StoreBackends.replication(at: location)
            print("\(location): \(replication.summary)")
            if let warning = replication.warning { printError("netpulse: warning: \(warning)") }
        } catch {
            print("\(location): not checked now (\(error))")
        }
    }
}
