import X509

extension Certificate {
    /// Whether this certificate issued `certificate`: its subject is the other's issuer and its key signed it. (Not
    /// a verification of the other: its dates, constraints and uses are the verifier's to check.)
    public func issued(_ certificate: Certificate) -> Bool {
        subject == certificate.issuer && publicKey.isValidSignature(certificate.signature, for: certificate)
    }
}
