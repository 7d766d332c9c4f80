import PulseAnalytics
import PulseCore
import PulseFormats
import PulseQuery
import Testing

/// How hostile names are written into the machine formats every output shares (`PulseFormats`).
@Suite struct FormatEscapingTests {
    /// Cells a spreadsheet would run as formulas get a leading `'` (CSV injection); numbers keep their sign.
    @Test func formulaLikeCsvCellsAreNeutralised() {
        #expect(CSVText.field("=1+1") == "'=1+1")
        #expect(CSVText.field("+cmd|' /C calc'!A0") == "'+cmd|' /C calc'!A0")
        #expect(CSVText.field("@SUM(A1)") == "'@SUM(A1)")
        #expect(CSVText.field("-2+3") == "'-2+3")
        #expect(CSVText.field("\tx") == "'\tx")
        #expect(CSVText.field("=HYPERLINK(\"http://x\",\"y\")") == "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"")
        #expect(CSVText.field("-12.5") == "-12.5")
        #expect(CSVText.field("+3") == "+3")
        #expect(CSVText.field("eth0") == "eth0")
        #expect(CSVText.field("a,b") == "\"a,b\"")
    }

    /// An interface name that is not UTF-8 keeps its bytes in JSON, in hex beside the readable name.
    @Test func namesThatAreNotUtf8KeepTheirBytesInJson() {
        let odd = SeriesRecord(
            id: 1, kind: .interface, agent: "web-01", interface: InterfaceName(bytes: [0x6E, 0xFF, 0xFE, 0x1B]))
        let json = FigureFormat.seriesJSON(odd)
        #expect(json.contains(#""interface_hex":"6efffe1b""#), "\(json)")
        // The text form: distinct from every other name's, reversible, no control character.
        #expect(json.contains(#""interface":"n\\xff\\xfe\\x1b""#), "\(json)")
        #expect(InterfaceName(text: odd.interface!.description) == odd.interface)
        #expect(InterfaceName(bytes: [0x6E, 0xFF]).description != InterfaceName(bytes: [0x6E, 0xFE]).description)
        let plain = SeriesRecord(id: 2, kind: .interface, agent: "web-01", interface: InterfaceName("a<b&c"))
        #expect(!FigureFormat.seriesJSON(plain).contains("interface_hex"))
    }
}
