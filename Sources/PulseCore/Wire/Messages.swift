/// Every frame the protocol knows. `docs/protocol.md` is the specification; this file and ``WireCodec`` are its
/// only implementation, shared by the agent and the daemon.
public enum WireMessage: Sendable, Hashable {
    case hello(Hello)
    case welcome(Welcome)
    case describe(Describe)
    case batch(WireBatch)
    case ack(Ack)
    case pace(Pace)
    case error(ErrorFrame)
    case keepalive
    case labels(Labels)
    case reject(Reject)
    case renew(Renew)
    case renewed(Renewed)
}

/// The type byte that follows a frame's length.
public enum FrameType: UInt8, Sendable, CaseIterable {
    case hello = 0x01
    case welcome = 0x02
    case describe = 0x03
    case batch = 0x04
    case ack = 0x05
    case pace = 0x06
    case error = 0x07
    case keepalive = 0x08
    case labels = 0x09
    case reject = 0x0A
    /// `DESCRIBE` with each epoch's start (`epoch-start`): decoded as a ``Describe`` too.
    case describeEpochs = 0x0B
    case renew = 0x0C
    case renewed = 0x0D
}

/// The protocol versions this build speaks.
public enum ProtocolVersion {
    /// Version 1 (netpulse 0.1) had no batch order, interval or heartbeat, so its batches cannot be counted
    /// correctly; its agents are refused with a message saying to upgrade them.
    public static let minimum: UInt8 = 2
    public static let maximum: UInt8 = 2
    /// The four bytes every `HELLO` starts with, so a stray client is told apart from an old agent.
    public static let magic: [UInt8] = Array("NPLS".utf8)
}

/// Agent → daemon, first frame on a connection.
public struct Hello: Sendable, Hashable {
    public var minimumVersion: UInt8
    public var maximumVersion: UInt8
    /// Must equal the common name of the agent's client certificate.
    public var agentID: String
    public var hostname: String
    public var agentVersion: String
    public var capabilities: Capabilities

    public init(
        minimumVersion: UInt8 = ProtocolVersion.minimum,
        maximumVersion: UInt8 = ProtocolVersion.maximum,
        agentID: String,
        hostname: String,
        agentVersion: String,
        capabilities: Capabilities = .all
    ) {
        self.minimumVersion = minimumVersion
        self.maximumVersion = maximumVersion
        self.agentID = agentID
        self.hostname = hostname
        self.agentVersion = agentVersion
        self.capabilities = capabilities
    }
}

/// Optional protocol features, negotiated as the intersection of both sides' sets.
public struct Capabilities: OptionSet, Sendable, Hashable {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The peer understands `PACE` frames.
    public static let pace = Capabilities(rawValue: 1 << 0)
    /// Batches may carry link-state records.
    public static let linkState = Capabilities(rawValue: 1 << 1)
    /// The agent takes `REJECT` frames: the daemon refuses one batch by name and the connection goes on.
    public static let reject = Capabilities(rawValue: 1 << 2)
    /// Both sides keep the descriptors and coding references of only the last ``StreamWindow/capacity`` streams a
    /// connection carried (`docs/protocol.md`, "References").
    public static let streamWindow = Capabilities(rawValue: 1 << 3)
    /// `DESCRIBE` may say when each interface's counter epoch began (`docs/protocol.md`, "Interface descriptors").
    public static let epochStart = Capabilities(rawValue: 1 << 4)
    /// The agent may ask for a new certificate on its connection (`RENEW`), and the daemon will sign it (it holds an
    /// issuing CA, `[enrollment]`): `docs/protocol.md`, "Renewal".
    public static let renewal = Capabilities(rawValue: 1 << 5)

    public static let all: Capabilities = [.pace, .linkState, .reject, .streamWindow, .epochStart, .renewal]
}

/// Daemon → agent, the answer to `HELLO`: the version chosen and the limits the agent must respect.
public struct Welcome: Sendable, Hashable {
    public var version: UInt8
    public var daemonName: String
    public var capabilities: Capabilities
    public var limits: WireLimits

    public init(version: UInt8, daemonName: String, capabilities: Capabilities, limits: WireLimits) {
        self.version = version
        self.daemonName = daemonName
        self.capabilities = capabilities
        self.limits = limits
    }
}

/// Agent → daemon: the interfaces a stream's batches refer to. Sent before the first batch that uses them on each
/// connection.
public struct Describe: Sendable, Hashable {
    public var stream: UInt64
    public var interfaces: [InterfaceDescriptor]

    public init(stream: UInt64, interfaces: [InterfaceDescriptor]) {
        self.stream = stream
        self.interfaces = interfaces
    }
}

/// Agent → daemon, after `WELCOME` and before any batch: the agent's labels (`site = "fra1"` …), which the daemon
/// may override; an agent never chooses its own billing group (`docs/windows.md`, "Scopes").
public struct Labels: Sendable, Hashable {
    public var pairs: [(key: String, value: String)]

    /// At most this many labels; keys are 1…64 bytes of `a-z 0-9 _` not starting with a digit or `__`, values
    /// 1…255 bytes of UTF-8 without control characters.
    public static let maximumCount = 32

    /// What a label key may be, in words for error messages.
    public static let keyRule = "a-z, 0-9 and '_', not starting with a digit or '__', at most 64 bytes"

    public init(_ pairs: [(key: String, value: String)]) {
        self.pairs = pairs
    }

    /// Whether `key` is a valid label key: a Prometheus label name in lower case (`[a-z_][a-z0-9_]*`) and not one of
    /// the names Prometheus reserves (`__…`), so labels pass unchanged to remote write and alert notifications.
    public static func isValidKey(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        guard let first = bytes.first, bytes.count <= 64, !(first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9"))
        else { return false }
        guard !key.hasPrefix("__") else { return false }
        return bytes.allSatisfy {
            ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
                || $0 == UInt8(ascii: "_")
        }
    }

    /// Whether `value` is a valid label value: 1…255 bytes without control characters (C0, DEL, C1), so no value
    /// can break a line of stored labels, a log line or a terminal.
    public static func isValidValue(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= 255
            && !value.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }

    public static func == (lhs: Labels, rhs: Labels) -> Bool {
        lhs.pairs.map(\.key) == rhs.pairs.map(\.key) && lhs.pairs.map(\.value) == rhs.pairs.map(\.value)
    }

    public func hash(into hasher: inout Hasher) {
        for pair in pairs {
            hasher.combine(pair.key)
            hasher.combine(pair.value)
        }
    }
}

/// Daemon → agent: a batch is durably stored (or was already).
public struct Ack: Sendable, Hashable {
    public var stream: UInt64
    public var sequence: UInt64
    public var duplicate: Bool

    public init(stream: UInt64, sequence: UInt64, duplicate: Bool = false) {
        self.stream = stream
        self.sequence = sequence
        self.duplicate = duplicate
    }
}

/// Daemon → agent: one batch was not stored. A permanent rejection means the daemon will never store it (the agent
/// sets it aside and goes on); otherwise the agent keeps it and sends it again on its next connection.
public struct Reject: Sendable, Hashable, CustomStringConvertible {
    public var stream: UInt64
    public var sequence: UInt64
    public var code: ErrorCode
    public var permanent: Bool
    public var message: String

    public init(stream: UInt64, sequence: UInt64, code: ErrorCode, permanent: Bool, message: String) {
        self.stream = stream
        self.sequence = sequence
        self.code = code
        self.permanent = permanent
        self.message = message
    }

    public var description: String {
        "batch \(sequence) of stream \(Hex.string(stream, width: 16)) \(permanent ? "refused for good" : "not stored for now"): \(code.name) (\(code.rawValue)): \(message)"
    }
}

/// Daemon → agent backpressure: multiply the sampling interval and the batch interval by these factors until the
/// next `PACE`; `1, 1` means back to normal.
public struct Pace: Sendable, Hashable {
    public var sampleFactor: UInt8
    public var batchFactor: UInt8

    public static let normal = Pace(sampleFactor: 1, batchFactor: 1)

    public init(sampleFactor: UInt8, batchFactor: UInt8) {
        self.sampleFactor = sampleFactor
        self.batchFactor = batchFactor
    }
}

/// Either side: what went wrong, before the sender closes the connection.
public struct ErrorFrame: Sendable, Hashable, Error, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.name) (\(code.rawValue)): \(message)" }
}

/// Error codes carried by `ERROR` frames.
public struct ErrorCode: RawRepresentable, Sendable, Hashable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let malformedFrame = ErrorCode(rawValue: 1)
    public static let frameTooLarge = ErrorCode(rawValue: 2)
    public static let unsupportedVersion = ErrorCode(rawValue: 3)
    public static let unexpectedFrame = ErrorCode(rawValue: 4)
    public static let identityMismatch = ErrorCode(rawValue: 5)
    public static let unknownInterface = ErrorCode(rawValue: 6)
    public static let storageFailure = ErrorCode(rawValue: 7)
    public static let overloaded = ErrorCode(rawValue: 8)
    public static let timeout = ErrorCode(rawValue: 9)
    public static let shuttingDown = ErrorCode(rawValue: 10)
    public static let invalidBatch = ErrorCode(rawValue: 11)

    public var name: String {
        switch self {
        case .malformedFrame: "malformed-frame"
        case .frameTooLarge: "frame-too-large"
        case .unsupportedVersion: "unsupported-version"
        case .unexpectedFrame: "unexpected-frame"
        case .identityMismatch: "identity-mismatch"
        case .unknownInterface: "unknown-interface"
        case .storageFailure: "storage-failure"
        case .overloaded: "overloaded"
        case .timeout: "timeout"
        case .shuttingDown: "shutting-down"
        case .invalidBatch: "invalid-batch"
        default: "error"
        }
    }
}

/// The bounds a decoder enforces before it allocates anything; the daemon announces its own in `WELCOME`.
public struct WireLimits: Sendable, Hashable {
    /// Largest frame, length prefix excluded.
    public var maximumFrameBytes: Int
    public var maximumTicksPerBatch: Int
    public var maximumSectionsPerBatch: Int
    /// Sum over a batch's sections of the samples each holds: bounds the decoded size whatever the frame claims.
    public var maximumSamplesPerBatch: Int
    public var maximumInterfacesPerDescribe: Int
    /// Batches the agent may send before it waits for an ack.
    public var maximumInFlight: Int

    public init(
        maximumFrameBytes: Int = 1 << 20,
        maximumTicksPerBatch: Int = 3_600,
        maximumSectionsPerBatch: Int = 1_024,
        maximumSamplesPerBatch: Int = 65_536,
        maximumInterfacesPerDescribe: Int = 1_024,
        maximumInFlight: Int = 32
    ) {
        self.maximumFrameBytes = maximumFrameBytes
        self.maximumTicksPerBatch = maximumTicksPerBatch
        self.maximumSectionsPerBatch = maximumSectionsPerBatch
        self.maximumSamplesPerBatch = maximumSamplesPerBatch
        self.maximumInterfacesPerDescribe = maximumInterfacesPerDescribe
        self.maximumInFlight = maximumInFlight
    }

    public static let standard = WireLimits()
}

/// Agent → daemon, with ``Capabilities/renewal``: a certificate request (PKCS#10, DER) for a new key the agent made,
/// naming the agent; the daemon answers `RENEWED`. At most ``maximumRequestBytes``.
public struct Renew: Sendable, Hashable {
    public var request: [UInt8]
    public static let maximumRequestBytes = 4096

    public init(request: [UInt8]) {
        self.request = request
    }
}

/// Daemon → agent, the answer to `RENEW`: the new certificate and those between it and the root (DER, leaf first),
/// or why not. The connection goes on either way.
public enum Renewed: Sendable, Hashable {
    case issued([[UInt8]])
    case refused(String)

    /// A chain has at most this many certificates, each at most ``maximumCertificateBytes``.
    public static let maximumChainLength = 4
    public static let maximumCertificateBytes = 8192
}
