import Foundation
import Testing

@testable import PulseCore

/// The one JSON encoder: what it writes reads back, through an independent parser, as exactly what was written, and
/// the same map always gives the same bytes.
@Suite struct JSONTextTests {
    /// Reads `text` with Foundation's parser (fragments allowed).
    func parsed(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    @Test func stringsReadBackIntact() throws {
        let texts = ["", "a<b&c", "p\"q>", "back\\slash", "a/b", "line\nbreak\r\ttab", "\u{1}\u{1F}\u{7F}", "é 漢 🙂"]
        for text in texts {
            #expect(try parsed(JSONText.string(text)) as? String == text, "\(JSONText.string(text))")
        }
        #expect(JSONText.string("say \"hi\"\nbye\u{7F}") == #""say \"hi\"\nbye\u007f""#)
    }

    /// Every ASCII character, then characters of two, three and four bytes, in one long text (as a panel's picture
    /// is): the bytes that need an escape are found among the others, and the others copied whole.
    @Test func everyCharacterReadsBackIntactInALongText() throws {
        let ascii = String(String.UnicodeScalarView((1...0x7F).compactMap(Unicode.Scalar.init)))
        let text = String(repeating: ascii + "é漢🙂<svg x=\"1\">\\</svg>\n", count: 200)
        #expect(try parsed(JSONText.string(text)) as? String == text)
        #expect(JSONText.string("\u{0}\u{8}\u{1B}") == #""\u0000\u0008\u001b""#)
    }

    @Test func mapsAreWrittenWithTheirKeysSorted() throws {
        let labels = ["site": "fra1", "customer": "a/b", "role": "edge \"1\""]
        let text = JSONText.object(strings: labels)
        #expect(text == #"{"customer":"a/b","role":"edge \"1\"","site":"fra1"}"#)
        #expect(try parsed(text) as? [String: String] == labels)
        #expect(JSONText.object(strings: [:]) == "{}")
        #expect(try parsed(JSONText.array(strings: ["b", "a\n"])) as? [String] == ["b", "a\n"])
    }

    @Test func doublesAreWholeWhenWholeAndNullWhenNotFinite() throws {
        #expect(JSONText.number(20_000_000.0) == "20000000")
        #expect(JSONText.number(-3.0) == "-3")
        #expect(JSONText.number(0.25) == "0.25")
        #expect(JSONText.number(Double?.none) == "null")
        #expect(JSONText.number(Double.infinity) == "null")
        #expect(JSONText.number(Double.nan) == "null")
        for value in [0.1, 1e21, -2.5e-7, 12_345.678_9, 9.007_199_254_740_992e15] {
            #expect(try (parsed(JSONText.number(value)) as? NSNumber)?.doubleValue == value, "\(value)")
        }
    }

    @Test func linesPutOneFieldOnEachLine() throws {
        let text = JSONText.lines([("a", JSONText.number(Int64(1))), ("b", JSONText.object(strings: ["k": "v"]))])
        #expect(text == "{\n  \"a\": 1,\n  \"b\": {\"k\":\"v\"}\n}")
        #expect(JSONText.lines([]) == "{}")
        #expect((try parsed(text) as? [String: Any])?["a"] as? Int == 1)
    }
}
