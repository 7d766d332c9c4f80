import ArgumentParser
import Foundation
import PulseCertificates
import PulseCore

extension CA {
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
                requests = Enrollment.pendingRequests(in: request, outputDirectory: out, overwrite: overwrite)
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
}
