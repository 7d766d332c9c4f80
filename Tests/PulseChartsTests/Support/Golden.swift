import Foundation
import TestSupport
import Testing

/// Golden files: each test's SVG is compared byte for byte with Tests/PulseChartsTests/Golden/NAME.svg.
/// Run the tests with `PULSECHARTS_REGENERATE=1` to rewrite the files after an intended change, then review the
/// diff. Every SVG compared here is also checked with xmllint and rsvg-convert.
enum Golden {
    static var regenerating: Bool {
        ProcessInfo.processInfo.environment["PULSECHARTS_REGENERATE"] == "1"
    }

    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

    static func url(_ name: String) -> URL {
        testsDirectory.appendingPathComponent("Golden").appendingPathComponent(name + ".svg")
    }

    static func check(_ svg: String, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        SVGCheck.validate(svg, name: name, sourceLocation: sourceLocation)
        compare(svg, with: url(name), sourceLocation: sourceLocation)
    }

    static func compare(_ svg: String, with url: URL, sourceLocation: SourceLocation = #_sourceLocation) {
        if regenerating {
            do {
                try FileManager.default.createDirectory(
                    at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try svg.write(to: url, atomically: true, encoding: .utf8)
            } catch {
                Issue.record("could not write \(url.path): \(error)", sourceLocation: sourceLocation)
            }
            return
        }
        guard let expected = try? String(contentsOf: url, encoding: .utf8) else {
            Issue.record(
                "missing golden file \(url.path); run with PULSECHARTS_REGENERATE=1", sourceLocation: sourceLocation)
            return
        }
        if expected != svg {
            let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
            let actualLines = svg.split(separator: "\n", omittingEmptySubsequences: false)
            let firstDifference =
                zip(expectedLines, actualLines).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                ?? min(expectedLines.count, actualLines.count)
            let expectedLine =
                firstDifference < expectedLines.count ? String(expectedLines[firstDifference].prefix(300)) : "<end>"
            let actualLine =
                firstDifference < actualLines.count ? String(actualLines[firstDifference].prefix(300)) : "<end>"
            Issue.record(
                """
                \(url.lastPathComponent) differs at line \(firstDifference + 1) \
                (run with PULSECHARTS_REGENERATE=1 if intended)
                expected: \(expectedLine)
                actual:   \(actualLine)
                """, sourceLocation: sourceLocation)
        }
    }
}
