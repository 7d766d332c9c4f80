import ArgumentParser
import Foundation
import PulseCertificates
import PulseCore

#if canImport(Glibc)
    import Glibc
#endif

struct CA: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ca",
        abstract: "Make a fleet CA and certificates for the daemon and agents.",
        subcommands: [Init.self, Issue.self, Sign.self, Revoke.self])

    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a CA: ca.pem (give it to every host) and ca-key.pem (keep it secret).")

        @Option(name: .long, help: "Directory for ca.pem and ca-key.pem.")
        var dir = "/etc/netpulse/ca"

        @Option(name: .long, help: "The CA's common name.")
        var name = CertificateAuthority.defaultCommonName

        @Option(name: .long, help: "Validity in days.")
        var days = CertificateAuthority.defaultCAValidityDays

        func run() throws {
            do {
                let ca = try CertificateAuthority.create(directory: dir, commonName: name, validityDays: days)
                print("created CA '\(ca.commonName)' in \(dir)")
                print("  certificate: \(ca.certificatePath)  (copy to every daemon and agent)")
                print("  private key: \(ca.privateKeyPath)  (keep secret; needed only to issue certificates)")
                print("  fingerprint: \(ca.fingerprint)")
            } catch {
                throw fail(error)
            }
        }
    }

    struct Issue: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Issue a certificate for an agent or an operator (clients) or the daemon (server), signed by the CA.")

        @Option(name: .long, help: "The CA directory (from `netpulse ca init`).")
        var dir = "/etc/netpulse/ca"

        @Option(name: .long, help: "Issue an agent certificate; NAME must equal the agent's [agent] id.")
        var agent: String?

        @Option(name: .long, help: "Issue a daemon certificate; agents set [daemon] server_name to NAME.")
        var daemon: String?

        @Option(
            name: .long,
            help:
                "Issue an operator certificate, for reading the daemon's HTTP API (netpulse --daemon https://…); the daemon accepts no other client certificate there."
        )
        var `operator`: String?

        @Option(name: .long, help: "Extra DNS name for a daemon certificate (repeatable).")
        var dns: [String] = []

        @Option(name: .long, help: "IP address for a daemon certificate (repeatable).")
        var ip: [String] = []

        @Option(name: .long, help: "Where to write NAME.pem and NAME-key.pem (default: the CA directory).")
        var out: String?

        @Option(name: .long, help: "Validity in days.")
        var days = CertificateAuthority.defaultLeafValidityDays

        @Option(
            name: .long,
            help:
                "Let this group read the key (0640): the role's own group, netpulse-daemon for the daemon, netpulse-agents for agents. Refused when it already reads a key of the other role here."
        )
        var group: String?

        @Flag(name: .long, help: "Replace an existing certificate and key of the same name.")
        var overwrite = false

        func validate() throws {
            guard [agent, daemon, `operator`].compactMap({ $0 }).count == 1 else {
                throw ValidationError("give exactly one of --agent NAME, --daemon NAME or --operator NAME")
            }
            if daemon == nil, !dns.isEmpty || !ip.isEmpty {
                throw ValidationError("--dns and --ip apply to daemon certificates only")
            }
        }

        func run() throws {
            do {
                let keyGroup = try group.map(KeyGroup.named)
                let ca = try CertificateAuthority.load(directory: dir)
                for warning in ca.warnings { printError("netpulse: warning: \(warning)") }
                let issued = try ca.issue(
                    role: agent != nil ? .agent : daemon != nil ? .daemon : .operator,
                    name: agent ?? daemon ?? `operator` ?? "", dnsNames: dns,
                    ipAddresses: ip, validityDays: days, outputDirectory: out ?? dir, overwrite: overwrite,
                    keyGroup: keyGroup)
                print("issued \(issued.role.rawValue) certificate '\(issued.name)'")
                print("  certificate: \(issued.certificatePath)")
                print("  private key: \(issued.keyPath)\(keyGroup.map { "  (readable by group \($0.name))" } ?? "")")
            } catch {
                throw fail(error)
            }
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a certificate: the daemon refuses it at the handshake once it reads the list.",
            discussion: """
                Adds the certificate to the revocation list (DIR/revoked.txt unless --list says otherwise). Copy the \
                list to each daemon, name it in [tls] revoked, and reload the daemon (systemctl reload netpulsed): \
                agents and operators presenting the certificate are refused from then on.
                """)

        @Argument(
            help:
                "The name a certificate was issued to (NAME.pem in --dir), or its serial number in hex (openssl x509 -noout -serial)."
        )
        var nameOrSerial: String?

        @Option(name: .long, help: "Revoke the certificate in this PEM file instead.")
        var certificate: String?

        @Option(name: .long, help: "The CA directory, where `netpulse ca issue` wrote NAME.pem.")
        var dir = "/etc/netpulse/ca"

        @Option(name: .long, help: "The revocation list to add it to (default: revoked.txt in the CA directory).")
        var list: String?

        func validate() throws {
            guard (nameOrSerial == nil) != (certificate == nil) else {
                throw ValidationError("give a NAME or SERIAL, or --certificate FILE (one of them)")
            }
        }

        func run() throws {
            let path = list ?? "\(dir)/\(RevocationList.defaultFileName)"
            do {
                let target: RevocationList.Target =
                    certificate.map { .certificate(path: $0) } ?? .nameOrSerial(nameOrSerial ?? "", directory: dir)
                let (entry, added) = try RevocationList.revoke(target, in: path)
                print(added ? "revoked \(entry.description)" : "already revoked: \(entry.description)")
                print("  list: \(path)  (copy it to each daemon's [tls] revoked, then: systemctl reload netpulsed)")
            } catch {
                throw fail(error)
            }
        }
    }

    struct Sign: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sign agents' certificate requests (from netpulse-agent request): the keys stay on their hosts.",
            discussion: """
                Signs NAME.csr as the agent NAME's certificate (NAME.pem beside it, or in --out), after checking \
                that the request is signed by its key and names NAME. Given a directory, signs every NAME.csr in it \
                that has no NAME.pem yet. Copy each NAME.pem back to its host, where the agent's [daemon] \
                certificate names it.
                """)

        @Argument(help: "A request (NAME.csr), or a directory of them.")
        var request: String

        @Option(name: .long, help: "The CA directory (from `netpulse ca init`).")
        var dir = "/etc/netpulse/ca"

        @Option(name: .long, help: "The agent the request must be for (default: the file's name, NAME.csr).")
        var agent: String?

        @Option(name: .long, help: "Where to write NAME.pem (default: beside the request).")
        var out: String?

        @Option(name: .long, help: "Validity in days.")
        var days = CertificateAuthority.defaultLeafValidityDays

        @Flag(name: .long, help: "Replace an existing NAME.pem (a request signed again).")
        var overwrite = false

        func run() throws {
            let ca: CertificateAuthority
            do {
                ca = try CertificateAuthority.load(directory: dir)
            } catch {
                throw fail(error)
            }
            for warning in ca.warnings { printError("netpulse: warning: \(warning)") }
            var isDirectory: ObjCBool = false
            let requests: [String]
            if FileManager.default.fileExists(atPath: request, isDirectory: &isDirectory), isDirectory.boolValue {
                guard agent == nil else {
                    throw fail(ValidationError("--agent names the agent of one request, not of a directory"))
                }
                let names = ((try? FileManager.default.contentsOfDirectory(atPath: request)) ?? [])
                    .filter { $0.hasSuffix(".csr") }.sorted()
                // Those signed already are left alone unless asked.
                requests = names.map { "\(request)/\($0)" }.filter { path in
                    overwrite
                        || !FileManager.default.fileExists(
                            atPath: "\(out ?? request)/\(Enrollment.name(ofRequestFile: path)).pem")
                }
                if requests.isEmpty { print("nothing to sign in \(request): no NAME.csr without its NAME.pem") }
            } else {
                requests = [request]
            }
            var failed = 0
            for path in requests {
                do {
                    let signed = try ca.sign(
                        requestAt: path, name: agent, validityDays: days, outputDirectory: out, overwrite: overwrite)
                    print("signed agent certificate '\(signed.name)': \(signed.certificatePath)")
                } catch {
                    printError("netpulse: \(error)")
                    failed += 1
                }
            }
            if failed > 0 { throw ExitCode(1) }
        }
    }
}
