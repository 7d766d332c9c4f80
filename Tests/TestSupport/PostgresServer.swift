import Foundation

/// A throwaway PostgreSQL 15 server for a test: its own cluster (initdb) in a temporary directory, on a port of its
/// own on loopback, with trust authentication for the user `netpulse`, stopped by ``stop()``. Never the system's
/// service. scripts/test.sh installs Debian's postgresql-15; when it is missing, ``start()`` throws (tests fail, they
/// never skip).
public final class PostgresServer: @unchecked Sendable {
    public static let binaries = "/usr/lib/postgresql/15/bin"
    /// How long (ms) a store opened by a test in the process of the whole suite lets a write transaction sit idle
    /// before the server ends it (`PostgresStore`'s `idleTransactionTimeout`), where the store's default is 15 s.
    ///
    /// That process's tests hold both cooperative threads of this two-core machine in blocking waits (processes,
    /// sleeps) for seconds at a time (a call that fails at once alone took 11 to 15 s there), so a store's task can
    /// wait that long for a thread between two statements of one transaction. Tests failed in CI with "the
    /// connection was lost in the middle of a transaction", which is what a session the server ended for sitting
    /// idle in a transaction gives. The limit itself is tested with a limit of its own
    /// (`PostgresStoreTests.aWriteTransactionLeftIdleIsEndedByTheServer`); a daemon sets it to its lease's length.
    public static let idleTransactionLimit: Int64 = 600_000
    public let directory: String
    public let port: Int
    public let user = "netpulse"

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    private init(directory: String, port: Int) {
        self.directory = directory
        self.port = port
    }

    /// Makes a cluster and starts it, trying a few ports until one is free.
    ///
    /// - Parameter durable: PostgreSQL's defaults (every commit fsynced), as benchmarks need; tests turn fsync off
    ///   (they kill daemons, never the server or the machine, and throw the cluster away).
    /// - Parameter tls: the server takes TLS connections only (`hostssl` in pg_hba.conf), with a certificate for the
    ///   name `localhost` (and no IP address) signed by a CA of its own (``certificateAuthority``), made with openssl.
    public static func start(durable: Bool = false, tls: Bool = false) throws -> PostgresServer {
        guard FileManager.default.isExecutableFile(atPath: binaries + "/initdb") else {
            throw Failure(description: "PostgreSQL 15 is not installed (scripts/test.sh installs postgresql-15)")
        }
        let directory = try run("/bin/mktemp", ["-d", "/tmp/netpulse-pg-XXXXXX"]).trimmingCharacters(
            in: .whitespacesAndNewlines)
        if getuid() == 0 { _ = try run("/bin/chown", ["postgres:postgres", directory]) }
        _ = try asServerUser(
            binaries + "/initdb",
            ["-D", directory + "/data", "-A", "trust", "-U", "netpulse", "-E", "UTF8", "--no-sync"])
        var options = ""
        if tls {
            let files = directory + "/tls"
            try makeCertificateAuthority(in: files)
            try issueServerCertificate(authority: files, name: "localhost")
            if getuid() == 0 { _ = try run("/bin/chown", ["-R", "postgres:postgres", files]) }
            try "local all all trust\nhostssl all all 127.0.0.1/32 trust\n".write(
                toFile: directory + "/data/pg_hba.conf", atomically: false, encoding: .utf8)
            options = " -c ssl=on -c ssl_cert_file=\(files)/server.pem -c ssl_key_file=\(files)/server-key.pem"
        }
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = Int.random(in: 20_000...60_000)
            do {
                _ = try asServerUser(
                    binaries + "/pg_ctl",
                    [
                        "-D", directory + "/data", "-l", directory + "/log", "-w", "-o",
                        "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c max_connections=50"
                            + (durable ? "" : " -c fsync=off -c synchronous_commit=off -c full_page_writes=off")
                            + options,
                        "start",
                    ])
                return PostgresServer(directory: directory, port: port)
            } catch {
                lastError = error
            }
        }
        throw lastError ?? Failure(description: "PostgreSQL did not start")
    }

    /// The CA that signed a TLS server's certificate (``start(durable:tls:)``).
    public var certificateAuthority: String { directory + "/tls/ca.pem" }

    /// A certificate authority of its own in `directory`: `ca.pem` and `ca-key.pem` (P-256, valid two days).
    public static func makeCertificateAuthority(in directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        _ = try run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                directory + "/ca-key.pem", "-out", directory + "/ca.pem", "-days", "2", "-subj", "/CN=netpulse test CA",
            ])
    }

    /// `server.pem` and `server-key.pem` in `authority` (a directory of ``makeCertificateAuthority(in:)``), for a
    /// server of the DNS name `name`; the key readable by its owner only, as PostgreSQL requires.
    static func issueServerCertificate(authority: String, name: String) throws {
        _ = try run(
            "/usr/bin/openssl",
            [
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                authority + "/server-key.pem", "-out", authority + "/server.csr", "-subj", "/CN=\(name)",
            ])
        try "subjectAltName=DNS:\(name)\nextendedKeyUsage=serverAuth\n".write(
            toFile: authority + "/server.ext", atomically: false, encoding: .utf8)
        _ = try run(
            "/usr/bin/openssl",
            [
                "x509", "-req", "-in", authority + "/server.csr", "-CA", authority + "/ca.pem", "-CAkey",
                authority + "/ca-key.pem", "-CAcreateserial", "-days", "2", "-extfile", authority + "/server.ext",
                "-out", authority + "/server.pem",
            ])
        chmod(authority + "/server-key.pem", 0o600)
    }

    /// Creates a database and returns its URL.
    public func createDatabase(_ name: String) throws -> String {
        _ = try Self.run(Self.binaries + "/createdb", ["-h", "127.0.0.1", "-p", "\(port)", "-U", user, name])
        return url(database: name)
    }

    public func url(database: String) -> String { "postgresql://\(user)@127.0.0.1:\(port)/\(database)" }

    /// Runs SQL with psql and returns its unaligned output.
    public func psql(_ database: String, _ sql: String) throws -> String {
        try Self.run(
            Self.binaries + "/psql",
            [
                "-h", "127.0.0.1", "-p", "\(port)", "-U", user, "-d", database, "-X", "-A", "-t", "-v",
                "ON_ERROR_STOP=1", "-c", sql,
            ])
    }

    /// Stops the server (fast shutdown) and keeps its cluster, for ``resume()``: a server gone for a while.
    public func halt() throws {
        _ = try Self.asServerUser(Self.binaries + "/pg_ctl", ["-D", directory + "/data", "-m", "fast", "-w", "stop"])
    }

    /// Starts a server ``halt()`` stopped again, on its port, with the options it last ran with (`pg_ctl restart`
    /// of a stopped server starts it with those of `postmaster.opts`).
    public func resume() throws {
        _ = try Self.asServerUser(
            Self.binaries + "/pg_ctl", ["-D", directory + "/data", "-l", directory + "/log", "-w", "restart"])
    }

    /// Stops the server (fast shutdown) and deletes its cluster.
    public func stop() {
        _ = try? Self.asServerUser(Self.binaries + "/pg_ctl", ["-D", directory + "/data", "-m", "fast", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs a server program as the `postgres` user when we are root (PostgreSQL refuses to run as root).
    static func asServerUser(_ program: String, _ arguments: [String]) throws -> String {
        if getuid() == 0 {
            return try run("/usr/sbin/runuser", ["-u", "postgres", "--", program] + arguments)
        }
        return try run(program, arguments)
    }

    /// Runs a program to its end and returns its output. Spawned and waited for directly (posix_spawn, waitpid):
    /// Foundation's Process did not notice `runuser … pg_ctl start` ending (it left it a zombie and waited
    /// forever), and a pipe would never reach its end while the server it started holds it. Output goes through a
    /// file instead. The program starts with no descriptor but its standard ones (through Python's `closerange`):
    /// the server `pg_ctl start` leaves running would otherwise keep every pipe other tests had open at that moment,
    /// and their readers would wait for its end.
    @discardableResult
    static func run(_ command: String, _ commandArguments: [String]) throws -> String {
        let program = "/usr/bin/python3"
        let arguments =
            ["-c", "import os, sys; os.closerange(3, 1 << 20); os.execv(sys.argv[1], sys.argv[1:])", command]
            + commandArguments
        let path = "/tmp/netpulse-pg-output-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        defer { unlink(path) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program, &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw Failure(description: "cannot start \(command): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        // WIFEXITED and WEXITSTATUS, which Swift does not import.
        let exited = status & 0x7f == 0
        let code = (status >> 8) & 0xff
        guard exited && code == 0 else {
            throw Failure(
                description:
                    "\(command) \(commandArguments.joined(separator: " ")) failed (status \(status)): \(text)")
        }
        return text
    }
}
