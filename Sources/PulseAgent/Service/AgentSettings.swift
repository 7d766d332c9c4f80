import NIOCore
import NIOSSL
import PulseCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The agent's current configuration, credentials and TLS context, replaced as a whole on reload (SIGHUP) and when a
/// renewed certificate arrives or is confirmed. Loops read it at each tick or connection attempt, so a reload takes
/// effect without dropping anything: the open batch, the spool and the current connection carry on, and the next
/// connection uses the new certificates (a connection ends by itself when its certificate is replaced, see
/// ``credentialsGeneration``).
public final class AgentSettings: Sendable {
    public struct Current: Sendable {
        public var config: AgentConfig
        /// The certificate and key connections use (``Credentials/choose(_:)``).
        public var credentials: Credentials
        public var tlsContext: NIOSSLContext
        /// Bumped whenever ``credentials`` change: an open connection made with older ones ends, so the daemon sees
        /// the new certificate (its expiry, its serial) at once.
        public var credentialsGeneration: Int
    }

    private let state: Mutex<Current>
    /// Connections made with a pending certificate that the daemon did not welcome.
    private let pendingFailures = Mutex(0)

    public init(config: AgentConfig) throws {
        let credentials = Credentials.choose(config)
        state = Mutex(
            Current(
                config: config, credentials: credentials, tlsContext: try Self.tlsContext(config, credentials),
                credentialsGeneration: 0))
    }

    /// How long closing a connection waits for the daemon's close_notify after sending the agent's own. The agent
    /// relies on acknowledgements, not on an orderly TLS close, so nothing hangs on it; a daemon host that went dark
    /// would otherwise hold every close, and so the agent's stop, for SwiftNIO's default of 5 s.
    static let closeNotifyWait = TimeAmount.milliseconds(250)

    static func tlsContext(_ config: AgentConfig, _ credentials: Credentials) throws -> NIOSSLContext {
        var files = config.tls
        files.certificate = credentials.files.certificate
        files.key = credentials.files.key
        var configuration = try TLSSetup.client(files)
        configuration.shutdownTimeout = closeNotifyWait
        return try NIOSSLContext(configuration: configuration)
    }

    public var current: Current { state.withLock { $0 } }
    public var config: AgentConfig { state.withLock { $0.config } }

    /// Validates `config` and its certificates, then makes it current.
    ///
    /// - Returns: settings that changed but need a restart to apply (the state directory).
    /// - Throws: the config's or the certificates' error; the current settings stay as they were.
    public func replace(with config: AgentConfig) throws -> [String] {
        // The renewed certificates are where the running agent keeps them, whatever the new config says.
        var chosenFrom = config
        chosenFrom.stateDirectory = self.config.stateDirectory
        let credentials = Credentials.choose(chosenFrom)
        let context = try Self.tlsContext(config, credentials)
        return state.withLock { current in
            var needRestart = [String]()
            if config.stateDirectory != current.config.stateDirectory { needRestart.append("agent.state_directory") }
            if config.spoolMaximumBytes != current.config.spoolMaximumBytes { needRestart.append("spool.max_size") }
            var applied = config
            applied.stateDirectory = current.config.stateDirectory
            applied.spoolMaximumBytes = current.config.spoolMaximumBytes
            let changed = credentials != current.credentials || config.tls.ca != current.config.tls.ca
            current = Current(
                config: applied, credentials: credentials, tlsContext: context,
                credentialsGeneration: current.credentialsGeneration + (changed ? 1 : 0))
            return needRestart
        }
    }

    // MARK: Renewal

    /// Keeps a renewed certificate (`text`: its key, then its chain) as pending and connects with it from now on.
    /// - Throws: when it cannot be written or loaded; the current credentials stay.
    func adoptRenewed(_ text: String) throws {
        let config = self.config
        let path = Credentials.pendingPath(config)
        try FileIO.createDirectory(Credentials.directory(config), mode: 0o700)
        // What the configured certificate says now: while it says the same, the renewed one stands in for it.
        if let configured = try? FileIO.readBytes(config.tls.certificate) {
            try FileIO.writeAtomically(Credentials.replacedPath(config), configured, mode: 0o600)
        }
        try FileIO.writeAtomically(path, Array(text.utf8), mode: 0o600)
        pendingFailures.withLock { $0 = 0 }
        try reselect()
    }

    /// A connection made with the pending certificate was welcomed: it becomes the renewed one, `current.pem`.
    /// - Returns: whether there was a pending certificate to confirm.
    func confirmPending() throws -> Bool {
        let config = self.config
        guard current.credentials.source == .pending else { return false }
        guard rename(Credentials.pendingPath(config), Credentials.currentPath(config)) == 0 else {
            throw FileIO.Failure(operation: "rename", path: Credentials.currentPath(config), errno: errno)
        }
        FileIO.syncDirectory(of: Credentials.currentPath(config))
        try reselect()
        return true
    }

    /// A connection made with the pending certificate reached the daemon and was not welcomed. After
    /// ``pendingAttempts`` of them it is set aside as `refused.pem` and the previous credentials are used again.
    /// - Returns: true when it was set aside.
    func pendingFailed() -> Bool {
        guard current.credentials.source == .pending else { return false }
        let failures = pendingFailures.withLock { failures in
            failures += 1
            return failures
        }
        guard failures >= Self.pendingAttempts else { return false }
        let config = self.config
        _ = rename(Credentials.pendingPath(config), "\(Credentials.directory(config))/refused.pem")
        try? reselect()
        return true
    }

    /// Connections a renewed certificate gets before it is set aside: two, so one that broke for another reason (a
    /// daemon restarting) does not cost the renewal.
    static let pendingAttempts = 2

    /// Chooses the credentials again (after the files changed), keeping the configuration.
    private func reselect() throws {
        let config = self.config
        let credentials = Credentials.choose(config)
        let context = try Self.tlsContext(config, credentials)
        state.withLock { current in
            guard credentials != current.credentials else { return }
            current.credentials = credentials
            current.tlsContext = context
            current.credentialsGeneration += 1
        }
    }
}
