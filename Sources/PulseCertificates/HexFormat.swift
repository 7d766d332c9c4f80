/// Uppercase, colon-separated hex, the form `openssl x509 -fingerprint` prints, so operators can compare.
enum HexFormat {
    static func colonSeparated<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        bytes.map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return byte < 0x10 ? "0" + digits : digits
        }.joined(separator: ":")
    }
}
