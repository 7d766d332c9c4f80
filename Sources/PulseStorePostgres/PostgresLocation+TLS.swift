import Foundation
import NIOSSL
import PostgresNIO
import PulseStore

/// How the location is reached with postgres-nio: a connection's and a pool's configuration.
extension PostgresLocation {
    func connectionConfiguration(tls context: NIOSSLContext?) -> PostgresConnection.Configuration {
        let mode: PostgresConnection.Configuration.TLS =
            switch (tls.mode, context) {
            case (.disable, _), (_, nil): .disable
            case (.prefer, let context?): .prefer(context)
            case (_, let context?): .require(context)
            }
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: mode)
        configuration.options.connectTimeout = .seconds(10)
        return configuration
    }

    /// The configuration of a pool of connections to this location (``PostgresPool``), the TLS files read now.
    /// - Throws: ``StoreError/unusable(_:)`` naming a TLS file that cannot be read or used.
    func clientConfiguration() throws -> PostgresClient.Configuration {
        let mode: PostgresClient.Configuration.TLS =
            switch (tls.mode, try tls.configuration()) {
            case (.disable, _), (_, nil): .disable
            case (.prefer, let configuration?): .prefer(configuration)
            case (_, let configuration?): .require(configuration)
            }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: mode)
        configuration.options.connectTimeout = .seconds(10)
        return configuration
    }
}

/// The TLS files of [store] postgresql as swift-nio-ssl loads them.
extension PostgresTLS {
    /// Reads and loads the files named, as a connection would (for `netpulse check-config`).
    /// - Throws: ``StoreError/unusable(_:)`` naming a file that cannot be read or used.
    public func validate() throws { _ = try context() }

    /// The client context for the mode (nil for `disable`).
    /// - Throws: ``StoreError/unusable(_:)`` naming a file that cannot be read or used.
    func context() throws -> NIOSSLContext? {
        guard let configuration = try configuration() else { return nil }
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw unusableFiles(error)
        }
    }

    /// The client configuration for the mode (nil for `disable`), the files of the parameters read now.
    /// - Throws: ``StoreError/unusable(_:)`` naming a file that cannot be read or used.
    func configuration() throws -> TLSConfiguration? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        switch mode {
        case .disable: return nil
        case .prefer: configuration.certificateVerification = .none
        case .require: configuration.certificateVerification = rootCertificate == nil ? .none : .noHostnameVerification
        case .verifyCA: configuration.certificateVerification = .noHostnameVerification
        case .verifyFull: configuration.certificateVerification = .fullVerification
        }
        for (parameter, path) in [("sslrootcert", rootCertificate), ("sslcert", certificate), ("sslkey", key)] {
            guard let path else { continue }
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw StoreError.unusable("cannot read \(path) (\(parameter) of [store] postgresql)")
            }
        }
        do {
            if let rootCertificate { configuration.trustRoots = .file(rootCertificate) }
            if let certificate, let key {
                configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) }
                configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))
            }
            return configuration
        } catch {
            throw unusableFiles(error)
        }
    }

    private func unusableFiles(_ error: any Error) -> StoreError {
        let files = [rootCertificate, certificate, key].compactMap { $0 }.joined(separator: ", ")
        return StoreError.unusable("cannot use the TLS files of [store] postgresql (\(files)): \(error)")
    }
}
