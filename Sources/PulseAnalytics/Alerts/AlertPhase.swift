/// Where an alert instance stands. Inactive instances are not kept: no phase is inactive.
public enum AlertStatus: String, Sendable, Hashable, CaseIterable {
    case pending, firing, resolved
}

/// How long a condition must hold before firing (`for`) and how long a firing alert stays after its value clears
/// (`keep_firing_for`), in milliseconds.
public struct AlertTiming: Sendable, Hashable {
    public var pendingFor: Int64
    public var keepFiringFor: Int64

    public init(pendingFor: Int64 = 0, keepFiringFor: Int64 = 0) {
        self.pendingFor = pendingFor
        self.keepFiringFor = keepFiringFor
    }
}

/// The state of one alert instance between evaluations: what the evaluator keeps in the store.
public struct AlertPhase: Sendable, Hashable {
    /// `.pending` or `.firing` (a resolved alert is inactive again and not kept).
    public var status: AlertStatus
    /// When the condition first held (the start of pending).
    public var activeSince: Int64
    public var firedAt: Int64?
    /// Firing, with the value back inside the clear threshold since then (waiting out `keep_firing_for`).
    public var clearSince: Int64?

    public init(status: AlertStatus, activeSince: Int64, firedAt: Int64? = nil, clearSince: Int64? = nil) {
        self.status = status
        self.activeSince = activeSince
        self.firedAt = firedAt
        self.clearSince = clearSince
    }

    /// One evaluation: the phase after seeing `value` at `now` (nil: inactive), and the transition it made, if
    /// any (`.pending`, `.firing` or `.resolved`). A nil value (no data) changes nothing.
    ///
    /// Inactive → pending when the value breaches the fire threshold (straight to firing when `for` is 0);
    /// pending → firing once it has breached for `for`, back to inactive (no event) as soon as it does not;
    /// firing → resolved once the value has been inside the clear threshold for `keep_firing_for`.
    public static func advance(
        _ phase: AlertPhase?, value: Double?, condition: AlertCondition, timing: AlertTiming, now: Int64
    ) -> (phase: AlertPhase?, transition: AlertStatus?) {
        guard let value else { return (phase, nil) }
        guard var phase else {
            guard condition.breaches(value) else { return (nil, nil) }
            if timing.pendingFor <= 0 {
                return (AlertPhase(status: .firing, activeSince: now, firedAt: now), .firing)
            }
            return (AlertPhase(status: .pending, activeSince: now), .pending)
        }
        switch phase.status {
        case .pending:
            guard condition.breaches(value) else { return (nil, nil) }
            guard now - phase.activeSince >= timing.pendingFor else { return (phase, nil) }
            phase.status = .firing
            phase.firedAt = now
            return (phase, .firing)
        case .firing:
            if condition.holds(value) {
                phase.clearSince = nil
                return (phase, nil)
            }
            let since = phase.clearSince ?? now
            guard now - since >= timing.keepFiringFor else {
                phase.clearSince = since
                return (phase, nil)
            }
            return (nil, .resolved)
        case .resolved:
            return (nil, nil)
        }
    }
}

/// Alertmanager's fingerprint of a label set: FNV-1a (64 bits) over the labels sorted by name, each name and value
/// followed by the byte 255, as 16 hexadecimal digits. Equal label sets have equal fingerprints everywhere.
public enum AlertFingerprint {
    public static func of(_ labels: [String: String]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ bytes: some Sequence<UInt8>) {
            for byte in bytes {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
        }
        for (name, value) in labels.sorted(by: { $0.key < $1.key }) {
            mix(name.utf8)
            mix([255])
            mix(value.utf8)
            mix([255])
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
