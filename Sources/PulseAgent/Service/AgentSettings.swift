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
        state = Mutex(
            Current(config: config, tlsContext: try NIOSSLContext(configuration: TLSSetup.client(config.tls))))
    }

    public var current: Current { state.withLock { $0 } }
    public var config: AgentConfig { state.withLock { $0.config } }

    /// Validates `config` and its certificates, then makes it current.
    ///
    /// - Returns: settings that changed but need a restart to apply (the state directory).
    /// - Throws: the config's or the certificates' error; the current settings stay as they were.
    public func replace(with config: AgentConfig) throws -> [String] {
        let context = try NIOSSLContext(configuration: TLSSetup.client(config.tls))
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
