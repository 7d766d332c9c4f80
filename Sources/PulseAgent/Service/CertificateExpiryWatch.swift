import Logging
import NIOSSL
import PulseCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Says in the journal, in time, that the agent's certificate is running out: once when 30 days or fewer are left
/// (a warning), once at 7 (an error) and once at 1 (critical), and when it has expired (critical: the daemon refuses
/// it). Checked at start, every hour, and after each reload; a reload that brings another certificate starts over
/// for it. The agent keeps running and spooling whatever it says: only the daemon can refuse a certificate.
///
/// The daemon shows the same from its side, each connected agent's expiry in `/metrics`
/// (`netpulse_agent_certificate_expiry_timestamp_seconds`).
final class CertificateExpiryWatch: Sendable {
    /// How close to its end a certificate is, from the least to the most urgent.
    enum Stage: Int, Comparable {
        case fine, month, week, day, expired

        static func < (lhs: Stage, rhs: Stage) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The stage of a certificate with `secondsLeft` to run.
        init(secondsLeft: Int64) {
            let day: Int64 = 86_400
            self =
                secondsLeft <= 0
                ? .expired
                : secondsLeft <= day ? .day : secondsLeft <= 7 * day ? .week : secondsLeft <= 30 * day ? .month : .fine
        }
    }

    /// The certificate last checked (its end, Unix seconds) and the most urgent stage said about it.
    private let said = Mutex<(notAfter: Int64, stage: Stage)?>(nil)
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// Reads the certificate at `path` and says what is due about it at `now` (Unix milliseconds). A file that
    /// cannot be read is left to the connection, which says why.
    func check(path: String, agent: String, now: Int64) {
        guard let leaf = try? NIOSSLCertificate.fromPEMFile(path).first else { return }
        let notAfter = Int64(leaf.notValidAfter)
        let stage = Stage(secondsLeft: notAfter - now / 1_000)
        let due = said.withLock { said -> Bool in
            let before = said?.notAfter == notAfter ? said!.stage : .fine
            guard stage > before else { return false }
            said = (notAfter, stage)
            return true
        }
        guard due else { return }
        let end = Self.utc(notAfter)
        let renew =
            "the agent renews it itself when its daemon has [enrollment]; else renew it: `netpulse-agent request` here, `netpulse ca sign --overwrite` on the CA's host, then put the new certificate in place and restart the agent, which the daemon then sees it with (its spool keeps what it has not sent; docs/operations.md)"
        let metadata: Logger.Metadata = ["certificate": "\(path)", "not_after": "\(end)"]
        switch stage {
        case .fine:
            break
        case .month, .week:
            let days = (notAfter - now / 1_000 + 86_399) / 86_400
            logger.log(
                level: stage == .month ? .warning : .error,
                "the certificate of agent \(agent) (\(path)) expires in \(days) days, at \(end); \(renew)",
                metadata: metadata)
        case .day:
            let hours = max(1, (notAfter - now / 1_000) / 3_600)
            logger.critical(
                "the certificate of agent \(agent) (\(path)) expires within a day (\(hours) h), at \(end); the daemon will refuse it then; \(renew)",
                metadata: metadata)
        case .expired:
            logger.critical(
                "the certificate of agent \(agent) (\(path)) expired at \(end): the daemon refuses it, and the agent spools until it has a new one; \(renew)",
                metadata: metadata)
        }
    }

    /// `2026-12-28 10:00 UTC`.
    static func utc(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return "\(seconds)" }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)) UTC"
    }
}
