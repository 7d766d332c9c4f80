import Testing

@testable import PulseCharts

@Suite struct FormatTests {
    @Test func unitsWithPrefixes() {
        #expect(ValueFormat.bitsPerSecond.format(12_500_000) == "12.5 Mbit/s")
        #expect(ValueFormat.bitsPerSecond.format(999_960) == "1 Mbit/s")
        #expect(ValueFormat.bitsPerSecond.format(0) == "0 bit/s")
        #expect(ValueFormat.bytes.format(3.2 * 1024 * 1024 * 1024) == "3.2 GiB")
        #expect(ValueFormat.bytes.format(1023) == "1023 B")
        #expect(ValueFormat.siBytes.format(3_400_000_000) == "3.4 GB")
        #expect(ValueFormat.bitsPerSecond.format(-2_000_000) == "-2 Mbit/s")
        #expect(ValueFormat.percent.format(0.256) == "25.6%")
        #expect(ValueFormat.fixed(decimals: 1, unit: "ms").format(3.14159) == "3.1 ms")
        #expect(ValueFormat.abbreviated.format(1500) == "1.5k")
        #expect(ValueFormat.number.format(1234.5678) == "1235")
    }

    @Test func tickLabelsShareOnePrefix() {
        #expect(
            ValueFormat.bitsPerSecond.formatTicks([0, 500_000, 1_000_000, 1_500_000])
                == ["0", "0.5 Mbit/s", "1.0 Mbit/s", "1.5 Mbit/s"])
        #expect(ValueFormat.number.formatTicks([0, 0.25, 0.5]) == ["0.00", "0.25", "0.50"])
        #expect(ValueFormat.number.formatTicks([0, 20_000, 40_000]) == ["0", "20k", "40k"])
        #expect(ValueFormat.bytes.formatTicks([0, 16 * 1_048_576, 32 * 1_048_576]) == ["0", "16 MiB", "32 MiB"])
    }

    @Test func decimalsAreLocaleFreeAndExact() {
        #expect(
            DecimalFormatter.format(1.005, decimals: 2) == "1.00"
                || DecimalFormatter.format(1.005, decimals: 2) == "1.01")
        #expect(DecimalFormatter.format(-0.0001, decimals: 2) == "0.00")
        #expect(DecimalFormatter.format(123_456_789, decimals: 0) == "123456789")
        #expect(DecimalFormatter.shortest(2.50, maxDecimals: 3) == "2.5")
        #expect(DecimalFormatter.format(1e20, decimals: 0) == "1e20")
        #expect(Coordinates.text(-0.001) == "0")
        #expect(Coordinates.text(12.345) == "12.35" || Coordinates.text(12.345) == "12.34")
        #expect(Coordinates.text(7.1) == "7.1")
    }

    @Test func textWidthsGrowWithText() {
        let narrow = TextMetrics.width("iiii", fontSize: 11)
        let wide = TextMetrics.width("WWWW", fontSize: 11)
        #expect(narrow < wide)
        #expect(TextMetrics.width("12.5 Mbit/s", fontSize: 11) > 60)
        #expect(TextMetrics.width("日本", fontSize: 10) == 20)
    }

    @Test func escapingHappensInOnePlace() {
        #expect(XMLEscaping.escape("a<b&c") == "a&lt;b&amp;c")
        #expect(XMLEscaping.escape("p\"q>") == "p&quot;q&gt;")
        #expect(XMLEscaping.escape("it's\u{0}") == "it&#39;s\u{FFFD}")
        #expect(XMLEscaping.escape("naïve ✓") == "naïve ✓")
    }
}
