import NIOCore
import NIOSSL
import PulseCore
import Synchronization

/// The agent's current configuration and TLS context, replaced as a whole on reload (SIGHUP). Loops read it at
/// each tick or connection attempt, so a reload takes effect without dropping anything: the open batch, the spool
/// and the current connection carry on, and the next connection uses the new certificates.
public final class AgentSettings: Sendable {
    public struct Current: Sendable {
        public var config: AgentConfig
        public var tlsContext: NIOSSLContext
    }

    private let state: Mutex<Current>

    public init(config: AgentConfig) throws {
        state = Mutex(Current(config: config, tlsContext: try Self.tlsContext(config)))
    }

    /// How long closing a connection waits for the daemon's close_notify after sending the agent's own. The agent
    /// relies on acknowledgements, not on an orderly TLS close, so nothing hangs on it; a daemon host that went dark
    /// would otherwise hold every close, and so the agent's stop, for SwiftNIO's default of 5 s.
    static let closeNotifyWait = TimeAmount.milliseconds(250)

    static func tlsContext(_ config: AgentConfig) throws -> NIOSSLContext {
        var configuration = try TLSSetup.client(config.tls)
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
        let context = try Self.tlsContext(config)
        return state.withLock { current in
            var needRestart = [String]()
            if config.stateDirectory != current.config.stateDirectory { needRestart.append("agent.state_directory") }
            if config.spoolMaximumBytes != current.config.spoolMaximumBytes { needRestart.append("spool.max_size") }
            var applied = config
            applied.stateDirectory = current.config.stateDirectory
            applied.spoolMaximumBytes = current.config.spoolMaximumBytes
            current = Current(config: applied, tlsContext: context)
            return needRestart
        }
    }
}
