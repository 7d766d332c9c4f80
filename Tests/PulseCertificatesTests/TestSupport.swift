import Foundation
import TestSupport
import Testing

@testable import PulseCertificates

/// A fresh directory under the system temporary directory, removed when `body` returns.
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    let path = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let path = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

private func makeTemporaryDirectory() throws -> String {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("pulse-certificates-tests-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    return path
}

/// The permission bits of `path`.
func permissions(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.posixPermissions] as? Int) ?? -1
}

/// The process umask, read without changing it (calling umask() would race with other tests creating files).
func processUmask() throws -> Int {
    let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
    let line = status.split(separator: "\n").first { $0.hasPrefix("Umask:") }
    return line.flatMap { Int($0.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8) } ?? 0o022
}

func contents(_ path: String) throws -> String {
    try String(contentsOfFile: path, encoding: .utf8)
}

func listing(_ directory: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
}

/// The outcome of running the `openssl` command-line tool.
struct CommandResult: CustomStringConvertible {
    let status: Int32
    let output: String

    var succeeded: Bool { status == 0 }
    var description: String { "exit \(status): \(output)" }
}

/// Runs `openssl` with `arguments`, capturing standard output and standard error together.
func openssl(_ arguments: String...) throws -> CommandResult {
    let (status, output) = try Command.run(["openssl"] + arguments)
    return CommandResult(status: status, output: output)
}

/// Runs `body`, which must throw a ``CertificateAuthorityError``, and returns that error.
func expectCAError(
    _ code: CertificateAuthorityError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) -> CertificateAuthorityError? {
    do {
        try body()
        Issue.record(
            "expected CertificateAuthorityError.\(code), but nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as CertificateAuthorityError {
        #expect(error.code == code, "\(error.message)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected CertificateAuthorityError.\(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// A CA plus an agent and a daemon certificate, in a temporary directory.
struct Fleet {
    static let agentName = "agent-01"
    static let daemonName = "netpulsed.test"

    let root: String
    let ca: CertificateAuthority
    let agent: IssuedCertificate
    let daemon: IssuedCertificate

    init(root: String, caName: String = "Test Fleet CA") throws {
        self.root = root
        ca = try CertificateAuthority.create(directory: root + "/ca", commonName: caName)
        agent = try ca.issue(role: .agent, name: Self.agentName, outputDirectory: root + "/certs")
        daemon = try ca.issue(
            role: .daemon,
            name: Self.daemonName,
            dnsNames: ["localhost"],
            ipAddresses: ["127.0.0.1", "::1"],
            outputDirectory: root + "/certs"
        )
    }
}
