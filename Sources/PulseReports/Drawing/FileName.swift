import PulseAnalytics
import PulseQuery

/// File names made from names people and agents chose, and the UTC stamps that order published files.
public enum FileName {
    /// `name` with every byte outside `A-Z a-z 0-9 . _ -` replaced by `_`, a leading `.` too (no hidden files, no
    /// `..`), and, when anything was replaced, `-` and eight hex digits of a hash of the original so different
    /// names never share a file. Empty names become `_` plus the hash.
    public static func safe(_ name: String) -> String {
        var out = [UInt8]()
        var changed = name.isEmpty
        for (index, byte) in name.utf8.enumerated() {
            let allowed =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || (byte == UInt8(ascii: ".") && index > 0)
            out.append(allowed ? byte : UInt8(ascii: "_"))
            if !allowed { changed = true }
        }
        // Long names are cut, keeping the hash: file names must stay well under 255 bytes with a range and stamp.
        if out.count > 80 {
            out = Array(out.prefix(80))
            changed = true
        }
        var text = String(decoding: out, as: UTF8.self)
        if changed { text += (text.isEmpty ? "_" : "-") + hash(name) }
        return text
    }

    /// `20251123T140530Z`: the UTC time to the second; sorts by time, safe in file names.
    public static func stamp(_ time: Int64) -> String {
        RFC3339.text(time - (time % 1_000 + 1_000) % 1_000).filter { $0 != "-" && $0 != ":" }
    }

    /// Whether `text` is a stamp as ``stamp(_:)`` writes it.
    static func isStamp<S: StringProtocol>(_ text: S) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 16, bytes[8] == UInt8(ascii: "T"), bytes[15] == UInt8(ascii: "Z") else { return false }
        return bytes.enumerated().allSatisfy { index, byte in
            index == 8 || index == 15 || (byte >= 0x30 && byte <= 0x39)
        }
    }

    /// The time a stamp names (ms), or nil.
    static func time<S: StringProtocol>(ofStamp text: S) -> Int64? {
        guard isStamp(text) else { return nil }
        let digits = Array(text)
        let rfc =
            "\(String(digits[0..<4]))-\(String(digits[4..<6]))-\(String(digits[6..<8]))T"
            + "\(String(digits[9..<11])):\(String(digits[11..<13])):\(String(digits[13..<15]))Z"
        return RFC3339.parse(rfc)
    }

    /// FNV-1a, 32 bits, as eight hex digits: stable across runs and machines (Swift's `Hasher` is seeded per run).
    static func hash(_ text: String) -> String {
        var value: UInt32 = 0x811C_9DC5
        for byte in text.utf8 {
            value ^= UInt32(byte)
            value = value &* 0x0100_0193
        }
        let digits = Array("0123456789abcdef")
        return String((0..<8).map { digits[Int((value >> (28 - 4 * UInt32($0))) & 0xF)] })
    }
}

extension DashboardSpec {
    /// The name as it appears in file names: only `A-Z a-z 0-9 . _ -`, never hidden, and with a short hash of the
    /// name when anything had to be replaced, so `a<b` and `a>b` stay apart.
    public var fileStem: String { FileName.safe(name) }
}
