import Foundation
import Testing

/// Shared by the test targets that draw SVG (PulseChartsTests, PulseReportsTests).
///
/// Checks an SVG with real tools through `Tests/Tools/check_outputs.py svg`: libxml2's `xmllint` must parse it and
/// librsvg's `rsvg-convert` must render it to a PNG that is not blank. The tools are installed by scripts/test.sh;
/// when one is missing the check fails, it never skips.
public enum SVGCheck {
    static let checker =
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tools/check_outputs.py").path

    static let directory: URL = {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("netpulse-svg-check-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    /// Validates `svg`; records a test failure with the tool's message when it is not well-formed, does not
    /// render, or renders blank.
    public static func validate(_ svg: String, name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let safe = String(name.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" })
            let path = directory.appendingPathComponent(safe + ".svg")
            try svg.write(to: path, atomically: true, encoding: .utf8)
            let (status, text) = try Command.run(["python3", checker, "svg", path.path])
            #expect(status == 0, "\(name).svg: \(text)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(name).svg could not be checked: \(error)", sourceLocation: sourceLocation)
        }
    }
}
