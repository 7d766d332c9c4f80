import TestSupport
import Testing

@testable import PulseCore

@Suite struct VarintTests {
    @Test(arguments: [0, 1, 127, 128, 300, 16_383, 16_384, UInt64(UInt32.max), UInt64.max - 1, UInt64.max])
    func roundTrip(_ value: UInt64) throws {
        var writer = WireWriter()
        writer.writeVarint(value)
        var reader = WireReader(writer.bytes)
        #expect(try reader.readVarint() == value)
        #expect(reader.isAtEnd)
        #expect(writer.bytes.count == max(1, (RiceCode.bitLength(value) + 6) / 7))
    }

    @Test func rejectsOverlongAndOverflowingAndTruncated() {
        var overlong = WireReader([0x80, 0x00])
        #expect(throws: WireError.malformed("overlong varint")) { try overlong.readVarint() }
        var overflow = WireReader([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02])
        #expect(throws: WireError.malformed("varint overflows 64 bits")) { try overflow.readVarint() }
        var truncated = WireReader([0x80, 0x80])
        #expect(throws: WireError.truncated) { try truncated.readVarint() }
    }

    @Test func boundedReadNamesTheField() {
        var writer = WireWriter()
        writer.writeVarint(5_000)
        var reader = WireReader(writer.bytes)
        #expect(throws: WireError.limitExceeded("ticks in batch is 5000, limit 3600")) {
            try reader.readVarint(max: 3_600, "ticks in batch")
        }
    }
}

@Suite struct RiceTests {
    @Test func roundTripsRandomValuesForEveryParameter() throws {
        var generator = SplitMix64(seed: 7)
        for k in [0, 1, 3, 8, 17, 31, 63] {
            var writer = WireWriter()
            var values = [UInt64]()
            for _ in 0..<200 {
                let bits = Int.random(in: 0...64, using: &generator)
                let value = bits == 64 ? generator.next() : generator.next() & ((1 << UInt64(bits)) - 1)
                values.append(value)
                writer.writeRice(value, k: k)
            }
            writer.alignToByte()
            var reader = WireReader(writer.bytes)
            for value in values { #expect(try reader.readRice(k: k) == value) }
            try reader.alignToByte()
            #expect(reader.isAtEnd)
        }
    }

    @Test func costMatchesWrittenBits() {
        for (value, k) in [(UInt64(0), 0), (5, 1), (1_000, 8), (1 << 40, 2), (UInt64.max, 0)] {
            var writer = WireWriter()
            writer.writeRice(value, k: k)
            let cost = RiceCode.cost(value, k: k)
            writer.alignToByte()
            #expect(writer.bytes.count == (cost + 7) / 8)
        }
    }

    @Test func zigzagIsABijectionOnSmallValues() {
        for value: Int64 in [-3, -2, -1, 0, 1, 2, 3, .min, .max] {
            let encoded = RiceCode.zigzag(UInt64(bitPattern: value))
            #expect(RiceCode.unzigzag(encoded) == UInt64(bitPattern: value))
        }
        #expect(RiceCode.zigzag(UInt64(bitPattern: -1)) == 1)
        #expect(RiceCode.zigzag(1) == 2)
    }
}

@Suite struct BootIDTests {
    @Test func parsesAndPrintsTheKernelFormat() throws {
        let text = "0f2b6c1e-3d4a-4b5c-9d8e-7f6a5b4c3d2e\n"
        let id = try #require(BootID(uuidString: text))
        #expect(id.description == "0f2b6c1e-3d4a-4b5c-9d8e-7f6a5b4c3d2e")
        #expect(id.high == 0x0f2b_6c1e_3d4a_4b5c)
    }

    @Test(arguments: [
        "", "0f2b6c1e", "0f2b6c1e-3d4a-4b5c-9d8e-7f6a5b4c3d2e0", "zz2b6c1e-3d4a-4b5c-9d8e-7f6a5b4c3d2e",
        "0f2b6c1e3-d4a-4b5c-9d8e-7f6a5b4c3d2e",
    ])
    func rejectsMalformedText(_ text: String) {
        #expect(BootID(uuidString: text) == nil)
    }
}

@Suite struct UnitsTests {
    @Test func parsesDurations() {
        #expect(Units.parseDuration("500ms") == 500)
        #expect(Units.parseDuration("1s") == 1_000)
        #expect(Units.parseDuration("1.5s") == 1_500)
        #expect(Units.parseDuration("5m") == 300_000)
        #expect(Units.parseDuration("2h") == 7_200_000)
        #expect(Units.parseDuration("7d") == 604_800_000)
        #expect(Units.parseDuration("10") == nil)
        #expect(Units.parseDuration("-1s") == nil)
        #expect(Units.parseDuration("abc") == nil)
        #expect(Units.formatDuration(300_000) == "5m")
        #expect(Units.formatDuration(1_500) == "1500ms")
    }

    /// How long ago, as a table shows it: two units, largest first.
    @Test func formatsAgesForPeople() {
        #expect(Units.formatAge(0) == "0s")
        #expect(Units.formatAge(999) == "0s")
        #expect(Units.formatAge(45_500) == "45s")
        #expect(Units.formatAge(125_000) == "2m 5s")
        #expect(Units.formatAge(3_723_000) == "1h 2m")
        #expect(Units.formatAge(3_600_000) == "1h 0m")
        #expect(Units.formatAge(97_260_000) == "1d 3h")
        #expect(Units.formatAge(-5_000) == "0s")
    }

    @Test func parsesAndFormatsSizes() {
        #expect(Units.parseByteSize("256KiB") == 262_144)
        #expect(Units.parseByteSize("64MiB") == 67_108_864)
        #expect(Units.parseByteSize("1GB") == 1_000_000_000)
        #expect(Units.parseByteSize("65536") == 65_536)
        #expect(Units.parseByteSize("12 parsecs") == nil)
        #expect(Units.formatBytes(812) == "812 B")
        #expect(Units.formatBytes(1_536) == "1.50 KiB")
        #expect(Units.formatBytes(3.2 * 1_073_741_824) == "3.20 GiB")
        #expect(Units.formatBitRate(bytesPerSecond: 1_562_500) == "12.5 Mbit/s")
        #expect(Units.formatBitRate(bytesPerSecond: 0) == "0 bit/s")
        #expect(Units.fixed(-0.004, decimals: 2) == "0.00")
        #expect(Units.fixed(-1.25, decimals: 1) == "-1.3")
    }

    @Test func parsesEndpoints() {
        #expect(Endpoint(parsing: "127.0.0.1:7420") == Endpoint(host: "127.0.0.1", port: 7420))
        #expect(Endpoint(parsing: "[::1]:7420") == Endpoint(host: "::1", port: 7420))
        #expect(Endpoint(parsing: "daemon.example:1") == Endpoint(host: "daemon.example", port: 1))
        #expect(Endpoint(parsing: "::1:7420") == nil)
        #expect(Endpoint(parsing: "host") == nil)
        #expect(Endpoint(parsing: "host:99999") == nil)
        #expect(Endpoint(host: "::1", port: 7420).description == "[::1]:7420")
    }
}
