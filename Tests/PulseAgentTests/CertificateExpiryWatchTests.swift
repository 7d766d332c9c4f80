import Foundation
import Logging
import Synchronization
import TestSupport
import Testing

@testable import PulseAgent

/// What the agent says as its certificate nears its end: each stage once per certificate, in order of urgency.
struct CertificateExpiryWatchTests {
    /// The log lines a watch writes, with their levels.
    final class Lines: LogHandler, @unchecked Sendable {
        let said = Mutex<[(Logger.Level, String)]>([])
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            said.withLock { $0.append((event.level, "\(event.message)")) }
        }
    }

    @Test func stagesFollowTheDaysLeft() {
        let day: Int64 = 86_400
        #expect(CertificateExpiryWatch.Stage(secondsLeft: 31 * day) == .fine)
        #expect(CertificateExpiryWatch.Stage(secondsLeft: 30 * day) == .month)
        #expect(CertificateExpiryWatch.Stage(secondsLeft: 7 * day + 1) == .month)
        #expect(CertificateExpiryWatch.Stage(secondsLeft: 7 * day) == .week)
        #expect(CertificateExpiryWatch.Stage(secondsLeft: day) == .day)
        #expect(CertificateExpiryWatch.Stage(secondsLeft: 1) == .day)
        #expect(CertificateExpiryWatch.Stage(secondsLeft: 0) == .expired)
        #expect(CertificateExpiryWatch.Stage(secondsLeft: -5) == .expired)
    }

    @Test func eachStageIsSaidOnceAsTimePasses() throws {
        let directory = temporaryDirectory()
        let certificate = directory + "/agent.pem"
        // A certificate valid for 40 days from now, made by openssl.
        let made = try Command.run([
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "40",
            "-subj", "/CN=web-01", "-keyout", directory + "/agent-key.pem", "-out", certificate,
        ])
        #expect(made.status == 0, "\(made.output)")
        let lines = Lines()
        let watch = CertificateExpiryWatch(logger: Logger(label: "test") { _ in lines })
        let start = Int64(Date().timeIntervalSince1970) * 1_000
        let day: Int64 = 86_400_000
        for elapsed in [0, 5, 10, 12, 20, 33, 35, 39, 39, 40, 41, 45] as [Int64] {
            watch.check(path: certificate, agent: "web-01", now: start + elapsed * day + 60_000)
        }
        let said = lines.said.withLock { $0 }
        #expect(said.map(\.0) == [.warning, .error, .critical, .critical], "\(said)")
        #expect(said[0].1.contains("the certificate of agent web-01 (\(certificate)) expires in 30 days, at "))
        #expect(said[1].1.contains("expires in 7 days"))
        #expect(said[2].1.contains("expires within a day"))
        #expect(said[3].1.contains("expired at") && said[3].1.contains("the daemon refuses it"))
        // The same certificate again says nothing more; a new one (after a reload) starts over.
        watch.check(path: certificate, agent: "web-01", now: start + 41 * day)
        #expect(lines.said.withLock { $0.count } == 4)
        let renewed = directory + "/renewed.pem"
        let remade = try Command.run([
            "openssl", "req", "-x509", "-key", directory + "/agent-key.pem", "-days", "20", "-subj", "/CN=web-01",
            "-out", renewed,
        ])
        #expect(remade.status == 0, "\(remade.output)")
        watch.check(path: renewed, agent: "web-01", now: start + 60_000)
        let again = lines.said.withLock { $0 }
        #expect(again.count == 5 && again[4].0 == .warning && again[4].1.contains("expires in 20 days"), "\(again)")
    }
}
