import ArgumentParser
import Foundation
import PulseCertificates
import PulseCore

extension CA {
    struct Renew: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Renew a certificate in place once it has lived two thirds of its life: the daemon's, from a timer.",
            discussion: """
                Gives CERT a new key and a certificate of the same role, names and lifetime, signed by the CA in \
                --dir, once it has lived --after of its life (else says when it will be due and leaves it). The key \
                keeps the group that reads it. netpulse-certificates.timer runs this daily for the daemon's \
                certificate, with --reload netpulsed.service so the daemon takes it for new connections. Agents \
                renew theirs over their connections ([enrollment]).
                """)

        @Argument(help: "The certificate to renew (its key is NAME-key.pem beside NAME.pem unless --key).")
        var certificate = "/etc/netpulse/netpulsed.pem"

        @Option(name: .long, help: "Its key (default: NAME-key.pem beside it).")
        var key: String?

        @Option(name: .long, help: "The CA directory that issued it.")
        var dir = "/etc/netpulse/ca"

        @Option(name: .long, help: "The share of its lifetime after which it is renewed.")
        var after = 0.67

        @Flag(name: .long, help: "Renew it whatever its age.")
        var force = false

        @Option(name: .long, help: "After renewing, reload this systemd unit (systemctl reload UNIT).")
        var reload: String?

        func validate() throws {
            guard (0.0...1.0).contains(after) else {
                throw ValidationError("--after is a share of the lifetime, 0 to 1")
            }
        }

        func run() throws {
            let outcome: RenewalOutcome
            do {
                let ca = try CertificateAuthority.load(directory: dir)
                for warning in ca.warnings { printError("netpulse: warning: \(warning)") }
                outcome = try ca.renew(certificateAt: certificate, keyAt: key, after: after, force: force)
            } catch {
                throw fail(error)
            }
            switch outcome {
            case .notDue(let due, let expires):
                print(
                    "\(certificate) is not due: it expires \(DateText.format(expires)), renewed after \(DateText.format(due))"
                )
            case .renewed(let issued):
                print(
                    "renewed \(issued.role.rawValue) certificate '\(issued.name)' until \(DateText.format(issued.certificate.notValidAfter))"
                )
                print("  certificate: \(issued.certificatePath)")
                print("  private key: \(issued.keyPath)")
                guard let reload else { return }
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/bin/systemctl")
                process.arguments = ["reload", reload]
                try process.run()
                process.waitUntilExit()
                guard process.terminationStatus == 0 else {
                    printError(
                        "netpulse: systemctl reload \(reload) failed: the new certificate is used from its next start")
                    throw ExitCode(1)
                }
                print("  reloaded \(reload)")
            }
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a certificate: the daemon refuses it at the handshake once it reads the list.",
            discussion: """
                Adds the certificate to the revocation list (DIR/revoked.txt unless --list says otherwise). Copy the \
                list to each daemon, name it in [tls] revoked, and reload the daemon (systemctl reload netpulsed): \
                agents and operators presenting the certificate are refused from then on. An agent whose certificate \
                the daemon renewed holds one no file here names: revoke it with --name.
                """)

        @Argument(
            help:
                "The name a certificate was issued to (NAME.pem in --dir), or its serial number in hex (openssl x509 -noout -serial)."
        )
        var nameOrSerial: String?

        @Option(name: .long, help: "Revoke the certificate in this PEM file instead.")
        var certificate: String?

        @Option(
            name: .customLong("name"),
            help:
                "Revoke every certificate issued to this agent (or operator) until now, those the daemon renewed included; a certificate issued to it later is accepted."
        )
        var everyCertificateOf: String?

        @Option(name: .long, help: "The CA directory, where `netpulse ca issue` wrote NAME.pem.")
        var dir = "/etc/netpulse/ca"

        @Option(name: .long, help: "The revocation list to add it to (default: revoked.txt in the CA directory).")
        var list: String?

        func validate() throws {
            guard [nameOrSerial, certificate, everyCertificateOf].compactMap({ $0 }).count == 1 else {
                throw ValidationError("give a NAME or SERIAL, --certificate FILE or --name NAME (one of them)")
            }
        }

        func run() throws {
            let path = list ?? "\(dir)/\(RevocationList.defaultFileName)"
            do {
                let target: RevocationList.Target =
                    certificate.map { .certificate(path: $0) }
                    ?? everyCertificateOf.map { .everyCertificate(name: $0) }
                    ?? .nameOrSerial(nameOrSerial ?? "", directory: dir)
                let (entry, added) = try RevocationList.revoke(target, in: path)
                print(added ? "revoked \(entry.description)" : "already revoked: \(entry.description)")
                print("  list: \(path)  (copy it to each daemon's [tls] revoked, then: systemctl reload netpulsed)")
            } catch {
                throw fail(error)
            }
        }
    }
}
