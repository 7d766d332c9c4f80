import X509

extension Certificate.SerialNumber {
    /// A random positive 16-byte serial number.
    ///
    /// swift-certificates' own random serial is 20 bytes, which becomes 21 once a leading zero is added to keep it
    /// positive, and some verifiers reject serials over 20 bytes (RFC 5280 4.1.2.2). Fixing the top two bits to
    /// `01` keeps it positive and exactly 16 bytes long, with 126 random bits.
    static func random128() -> Self {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        bytes[0] = (bytes[0] & 0x3F) | 0x40
        return Self(bytes: bytes)
    }
}
