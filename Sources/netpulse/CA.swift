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
                let keyGroup = try CA.daemonGroup(group)
                let issuingDirectory =
                    issuingDirectory ?? CertificateAuthority.defaultIssuingDirectory(besideRoot: dir)
                // Checked before the root is made, so a refusal leaves nothing half done.
                if !noIssuing {
                    try CA.checkNoCA(
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

    /// The group that reads an issuing CA's key: `name`, or the daemon's group when it exists (as the packages and
    /// install.sh make it), as `netpulse-agent request` gives an agent's key to the agents' group.
    static func daemonGroup(_ name: String?) throws -> KeyGroup? {
        if let name { return try KeyGroup.named(name) }
        return try? KeyGroup.named("netpulse-daemon")
    }

    /// Refuses a directory for a new issuing CA that holds a CA already.
    static func checkNoCA(in directory: String, advice: String) throws {
        for file in [CertificateAuthority.certificateFileName, CertificateAuthority.privateKeyFileName]
        where FileManager.default.fileExists(atPath: "\(directory)/\(file)") {
            throw ValidationError(
                "\(directory)/\(file) exists: a CA is there already. \(advice)."
            )
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
                let keyGroup = try CA.daemonGroup(group)
                let loaded = try CertificateAuthority.load(directory: dir)
                for warning in loaded.warnings { printError("netpulse: warning: \(warning)") }
                let directory = out ?? CertificateAuthority.defaultIssuingDirectory(besideRoot: dir)
                // Checked before the root is touched.
                try CA.checkNoCA(
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

        @Option(name: .long, help: "Validity in days (default: 365).")
        var days: Int?

        @Option(name: .long, help: "Validity as a duration instead of days: 90d, 12h, 3m.")
        var validity: String?

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
            _ = try CA.validity(days: days, duration: validity)
        }

        func run() throws {
            do {
                let keyGroup = try group.map(KeyGroup.named)
                let ca = try CertificateAuthority.load(directory: dir)
                for warning in ca.warnings { printError("netpulse: warning: \(warning)") }
                let issued = try ca.issue(
                    role: agent != nil ? .agent : daemon != nil ? .daemon : .operator,
                    name: agent ?? daemon ?? `operator` ?? "", dnsNames: dns,
                    ipAddresses: ip, validity: try CA.validity(days: days, duration: validity),
                    outputDirectory: out ?? dir, overwrite: overwrite,
                    keyGroup: keyGroup)
                print("issued \(issued.role.rawValue) certificate '\(issued.name)'")
                print("  certificate: \(issued.certificatePath)")
                print("  private key: \(issued.keyPath)\(keyGroup.map { "  (readable by group \($0.name))" } ?? "")")
            } catch {
                throw fail(error)
            }
        }
    }

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

        @Option(name: .long, help: "Validity in days (default: 365).")
        var days: Int?

        @Option(name: .long, help: "Validity as a duration instead of days: 90d, 12h, 3m.")
        var validity: String?

        @Flag(name: .long, help: "Replace an existing NAME.pem (a request signed again).")
        var overwrite = false

        func validate() throws {
            _ = try CA.validity(days: days, duration: validity)
        }

        func run() throws {
            let certificateValidity = try CA.validity(days: days, duration: validity)
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
                        requestAt: path, name: agent, validity: certificateValidity, outputDirectory: out,
                        overwrite: overwrite)
                    print("signed agent certificate '\(signed.name)': \(signed.certificatePath)")
                } catch {
                    printError("netpulse: \(error)")
                    failed += 1
                }
            }
            if failed > 0 { throw ExitCode(1) }
        }
    }

    /// The validity `--days` or `--validity` asks for (one of them; a year without either).
    static func validity(days: Int?, duration: String?) throws -> Validity {
        switch (days, duration) {
        case (nil, nil): return .days(CertificateAuthority.defaultLeafValidityDays)
        case (let days?, nil): return .days(days)
        case (nil, let text?):
            guard let milliseconds = Units.parseDuration(text), milliseconds % 1000 == 0, milliseconds > 0 else {
                throw ValidationError(
                    "--validity \(text.debugDescription) is not a duration in whole seconds: 90d, 12h, 3m, 45s")
            }
            return Validity(seconds: Int(milliseconds / 1000))
        case (_?, _?): throw ValidationError("give --days or --validity, not both")
        }
    }
}
