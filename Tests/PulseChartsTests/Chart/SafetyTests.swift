import Foundation
import PulseCharts
import TestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

@Suite struct SafetyTests {
    static let hostile = ["a<b&c", "p\"q>", "\"><script>alert(1)</script>", "it's", "tab\tand\u{1}control"]

    @Test func hostileTextIsAlwaysData() throws {
        let chart = Chart(Array(SafetyTests.hostile.enumerated()), id: \.offset) { item in
            BarMark(x: .value("Name<&>", item.element), y: .value("Value\"", Double(item.offset + 1)))
                .foregroundStyle(by: .value("Series'\"", item.element))
                .annotation { Text(item.element) }
        }
        .chartTitle("\"><script>alert('title')</script>")
        .chartXAxisLabel("a<b&c")
        .chartYAxisLabel("p\"q>")
        .frame(width: 520, height: 260)
        let svg = chart.renderSVG()
        Golden.check(svg, "escaping-hostile")
        #expect(!svg.contains("<script"))
        #expect(!svg.contains("a<b"))
        #expect(svg.contains("a&lt;b&amp;c"))
        #expect(svg.contains("p&quot;q&gt;"))
        // A real XML parser reads the labels back exactly (the control character is replaced).
        let texts = try XMLTexts.texts(of: svg)
        #expect(texts.contains("a<b&c"))
        #expect(texts.contains("p\"q>"))
        #expect(texts.contains("\"><script>alert(1)</script>"))
        #expect(texts.contains("\"><script>alert('title')</script>"))
    }

    @Test func hostileDescriptionAndIDs() throws {
        let chart = Chart {
            LineMark(x: .value("t", 1), y: .value("v", 2.0))
            LineMark(x: .value("t", 2), y: .value("v", 3.0))
        }
        .chartDescription("</desc><desc>x")
        let svg = chart.renderSVG(idPrefix: "a\"b")
        SVGCheck.validate(svg, name: "escaping-description")
        #expect(svg.contains("&lt;/desc&gt;&lt;desc&gt;x"))
        #expect(svg.contains("id=\"a&quot;b-title\""))
    }

    @Test func emptyChartSaysNoData() {
        let empty = Chart { EmptyChartContent() }.frame(width: 300, height: 160)
        let svg = empty.renderSVG()
        Golden.check(svg, "empty")
        #expect(SVGText.texts(svg) == ["No data"])
        #expect(svg.contains("<desc id=\"pc-desc\">No data.</desc>"))

        let missing: [Double?] = [nil, nil, .nan]
        let allMissing = Chart(Array(missing.enumerated()), id: \.offset) { item in
            LineMark(x: .value("i", item.offset), y: .value("v", item.element))
        }
        .chartTitle("Nothing yet")
        .frame(width: 300, height: 160)
        let missingSVG = allMissing.renderSVG()
        SVGCheck.validate(missingSVG, name: "empty-missing")
        #expect(SVGText.texts(missingSVG) == ["Nothing yet", "No data"])
    }

    @Test func sameInputSameBytes() async {
        func make() -> String {
            Chart(SampleData.traffic(interfaces: ["b", "a", "c"], step: 600)) { s in
                LineMark(x: .value("Time", s.time), y: .value("Rate", s.bitsPerSecond))
                    .foregroundStyle(by: .value("Interface", s.interface))
            }
            .chartYAxis { AxisMarks(format: .bitsPerSecond) }
            .renderSVG()
        }
        let first = make()
        let others = await withTaskGroup(of: String.self) { group in
            for _ in 0..<4 { group.addTask { make() } }
            var results: [String] = []
            for await svg in group { results.append(svg) }
            return results
        }
        #expect(others.allSatisfy { $0 == first })
        // Series keep the order in which they first appear, not a hash order.
        let legend = SVGText.elements(first, "g").first { $0.hasPrefix("<g class=\"legend\"") } ?? ""
        #expect(SVGText.texts(legend) == ["b", "a", "c"])
    }

    @Test func everyMarkCarriesAccessibleText() {
        let svg = Chart(Fixtures.weekdaySales) { sale in
            BarMark(x: .value("Day", sale.day), y: .value("Sales", sale.count))
                .foregroundStyle(by: .value("City", sale.city))
        }
        .renderSVG()
        #expect(svg.contains("role=\"img\""))
        #expect(svg.contains("aria-labelledby=\"pc-title pc-desc\""))
        #expect(svg.contains("<title id=\"pc-title\">Bar chart of Sales by Day</title>"))
        #expect(svg.contains("Lyon ranges from 4 to 15, highest at Wed."))
        #expect(svg.contains("<title>City: Graz, Day: Thu, Sales: 13</title>"))
    }
}

/// Parses SVG with Foundation's libxml2-based XMLParser and returns the character data of every element.
enum XMLTexts {
    final class Collector: NSObject, XMLParserDelegate {
        var texts: [String] = []
        var current = ""
        var error: Error?

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName: String?, attributes: [String: String] = [:]
        ) {
            current = ""
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            current += string
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
            qualifiedName: String?
        ) {
            if !current.isEmpty { texts.append(current) }
            current = ""
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
            error = parseError
        }
    }

    static func texts(of svg: String) throws -> [String] {
        let parser = XMLParser(data: Data(svg.utf8))
        let collector = Collector()
        parser.delegate = collector
        guard parser.parse() else {
            throw collector.error ?? parser.parserError ?? CocoaError(.fileReadCorruptFile)
        }
        return collector.texts
    }
}
