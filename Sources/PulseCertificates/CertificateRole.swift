/// What a leaf certificate is for, which decides its extended key usage and subject alternative names.
public enum CertificateRole: String, Sendable, Hashable, CaseIterable {
    /// An agent: a TLS client (EKU clientAuth) whose only name is its own.
    case agent
    /// The daemon: a TLS server (EKU serverAuth) that may answer to extra DNS names and IP addresses.
    case daemon
}
