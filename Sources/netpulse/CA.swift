import ArgumentParser
import Foundation
import PulseCertificates
import PulseCore

struct CA: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ca",
        abstract: "Make a fleet CA and certificates for the daemon and agents.",
        subcommands: [Init.self, Issuing.self, Issue.self, Sign.self, Renew.self, Revoke.self])

    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Create a CA: a root (ca.pem for every host, ca-key.pem kept secret) and an issuing CA that renews agents' certificates.",
            discussion: """
                The root goes into --dir; the issuing CA for agents (path length 0, client authentication only) into \
                --issuing-dir, where the daemon reads it when [enrollment] names it, to renew agents' certificates \
                over their connections. Give --group netpulse-daemon so the daemon may read its key.
                """)

        @Option(name: .long, help: "Directory for the root's ca.pem and ca-key.pem.")
        var dir = "/etc/netpulse/ca"

        @Option(name: .long, help: "The root's common name.")
        var name = CertificateAuthority.defaultCommonName

        @Option(name: .long, help: "The root's validity in days.")
        var days = CertificateAuthority.defaultCAValidityDays

        @Option(
            name: .customLong("issuing-dir"),
            help: "Directory for the issuing CA's ca.pem and ca-key.pem (default: enrollment beside --dir).")
        var issuingDirectory: String?

        @Option(
            name: .long,
            help:
                "Let this group read the issuing CA's key (0640), for the daemon (default: netpulse-daemon when that group exists, else nobody: 0600)."
        )
        var group: String?

        @Flag(name: .customLong("no-issuing"), help: "Make the root alone (agents' certificates then never renew).")
        var noIssuing = false

        func validate() throws {
            if noIssuing, issuingDirectory != nil || group != nil {
                throw ValidationError("--issuing-dir and --group are for the issuing CA, which --no-issuing leaves out")
            }
        }

        func run() throws {
            do {
                let keyGroup = try KeyGroup.daemonGroup(named: group)
                let issuingDirectory =
                    issuingDirectory ?? CertificateAuthority.defaultIssuingDirectory(besideRoot: dir)
                // Checked before the root is made, so a refusal leaves nothing half done.
                if !noIssuing {
                    try CertificateAuthority.checkRoomForIssuing(
                        in: issuingDirectory, advice: "Give --issuing-dir another directory, or --no-issuing")
                }
                let ca = try CertificateAuthority.create(directory: dir, commonName: name, validityDays: days)
                print("created CA '\(ca.commonName)' in \(dir)")
                print("  certificate: \(ca.certificatePath)  (copy to every daemon and agent)")
                print("  private key: \(ca.privateKeyPath)  (keep secret; needed only to issue certificates)")
                print("  fingerprint: \(ca.fingerprint)")
                guard !noIssuing else { return }
                let issuing = try ca.createIssuing(directory: issuingDirectory, keyGroup: keyGroup)
                CA.printIssuing(issuing, keyGroup: keyGroup)
            } catch {
                throw fail(error)
            }
        }
    }

    /// What `init` and `issuing` say about a new issuing CA.
    static func printIssuing(_ issuing: CertificateAuthority, keyGroup: KeyGroup?) {
        print("created issuing CA '\(issuing.commonName)' for agents in \(issuing.directory)")
        print("  certificate: \(issuing.certificatePath)")
        print(
            "  private key: \(issuing.privateKeyPath)\(keyGroup.map { "  (readable by group \($0.name))" } ?? "")")
        print("  the daemon renews agents' certificates with it: [enrollment] directory = \"\(issuing.directory)\"")
    }

    struct Issuing: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an issuing CA for agents under an existing root, or replace one that expires.",
            discussion: """
                A root made by an older netpulse allows no CA below it (path length 0): it is signed again with its \
                own key, the same name and dates, into ca.pem (the old one kept as ca-pathlen0.pem). Install the new \
                ca.pem as the daemon's [tls] ca and reload it; the copies on agents' hosts may stay, since the \
                daemon's certificate is signed by the same key. Then name the new issuing CA in [enrollment]: agents \
                renew with it from their next connection.
                """)

        @Option(name: .long, help: "The root CA's directory (from `netpulse ca init`).")
        var dir = "/etc/netpulse/ca"

        @Option(name: .long, help: "Directory for the issuing CA (default: enrollment beside --dir).")
        var out: String?

        @Option(name: .long, help: "The issuing CA's common name.")
        var name = CertificateAuthority.defaultIssuingCommonName

        @Option(name: .long, help: "Validity in days (at most the root's remaining life).")
        var days = CertificateAuthority.defaultIssuingValidityDays

        @Option(
            name: .long,
            help:
                "Let this group read the issuing CA's key (0640), for the daemon (default: netpulse-daemon when that group exists, else nobody: 0600)."
        )
        var group: String?

        func run() throws {
            do {
                let keyGroup = try KeyGroup.daemonGroup(named: group)
                let loaded = try CertificateAuthority.load(directory: dir)
                for warning in loaded.warnings { printError("netpulse: warning: \(warning)") }
                let directory = out ?? CertificateAuthority.defaultIssuingDirectory(besideRoot: dir)
                // Checked before the root is touched.
                try CertificateAuthority.checkRoomForIssuing(
                    in: directory, advice: "Give --out another directory, then name it in [enrollment] directory")
                let (root, replaced) = try loaded.allowingIssuingCA()
                if replaced {
                    print(
                        "signed the root again to allow one issuing CA below it (path length 1): \(root.certificatePath)"
                    )
                    print(
                        "  the previous one is kept as \(dir)/\(CertificateAuthority.previousCertificateFileName)")
                    print("  install the new ca.pem as each daemon's [tls] ca, then: systemctl reload netpulsed")
                }
                CA.printIssuing(
                    try root.createIssuing(
                        directory: directory, commonName: name, validityDays: days, keyGroup: keyGroup),
                    keyGroup: keyGroup)
            } catch {
                throw fail(error)
            }
        }
    }

    /// The validity `--days` or `--validity` asks for, or a usage error naming them.
    static func validity(days: Int?, duration: String?) throws -> Validity {
        do {
            return try Validity.chosen(days: days, duration: duration)
        } catch {
            throw ValidationError(error.description)
        }
    }
}
