import Foundation

/// A streaming standby of a test's ``PostgresServer``: a base backup of it (`pg_basebackup -R`, which writes the
/// standby's `primary_conninfo`) started on a port of its own, named by `cluster_name` (its `application_name` on
/// the primary, as `synchronous_standby_names` names it). Stop it before its primary.
public final class PostgresStandby: @unchecked Sendable {
    public let name: String
    public let port: Int
    let data: String

    init(name: String, port: Int, data: String) {
        self.name = name
        self.port = port
        self.data = data
    }

    /// Stops the standby (fast shutdown); its files go with the primary's directory.
    public func stop() {
        _ = try? PostgresServer.asServerUser(
            PostgresServer.binaries + "/pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"])
    }
}

extension PostgresServer {
    /// Takes a base backup of this server and starts it as a streaming standby named `name`, trying a few ports.
    public func startStandby(name: String = "replica1") throws -> PostgresStandby {
        let data = directory + "/\(name)"
        _ = try Self.asServerUser(
            Self.binaries + "/pg_basebackup",
            ["-h", "127.0.0.1", "-p", "\(port)", "-U", user, "-D", data, "-R", "-X", "stream", "--no-sync"])
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = Int.random(in: 20_000...60_000)
            do {
                _ = try Self.asServerUser(
                    Self.binaries + "/pg_ctl",
                    [
                        "-D", data, "-l", directory + "/\(name).log", "-w", "-o",
                        "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c cluster_name=\(name)", "start",
                    ])
                return PostgresStandby(name: name, port: port, data: data)
            } catch {
                lastError = error
            }
        }
        throw lastError ?? Failure(description: "the standby did not start")
    }
}
