import Foundation
import Testing

/// Checks an SVG with real tools: libxml2's `xmllint` must parse it and librsvg's `rsvg-convert` must render it
/// to a PNG that is not blank. The tools are installed by scripts/test.sh; when one is missing the check fails,
/// it never skips.
enum SVGCheck {
    struct Result: Decodable {
        var ok: Bool
        var message: String
        var width: Int?
        var height: Int?
        var inkFraction: Double?
    }

    static let directory: URL = {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("pulsecharts-tests-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    /// Validates `svg`; records a test failure with the tool's message when it is not well-formed, does not
    /// render, or renders blank.
    static func validate(_ svg: String, name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let result = try run(svg, name: name)
            #expect(result.ok, "\(name).svg: \(result.message)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(name).svg could not be checked: \(error)", sourceLocation: sourceLocation)
        }
    }

    static func run(_ svg: String, name: String) throws -> Result {
        let safe = name.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" }
        let svgURL = directory.appendingPathComponent(String(safe) + ".svg")
        let pngURL = directory.appendingPathComponent(String(safe) + ".png")
        try svg.write(to: svgURL, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, svgURL.path, pngURL.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last,
            let result = try? JSONDecoder().decode(Result.self, from: Data(line.utf8))
        else {
            return Result(ok: false, message: "checker failed: " + String(decoding: data, as: UTF8.self))
        }
        return result
    }

    /// Runs xmllint and rsvg-convert, then decodes the PNG with zlib and counts pixels that differ from the
    /// most common colour. The PNG is rendered 160 px wide to keep the pure-Python decoding fast.
    static let script = #"""
        import json, shutil, struct, subprocess, sys, zlib
        svg, png = sys.argv[1], sys.argv[2]
        def done(ok, message, **extra):
            extra.update(ok=ok, message=message)
            print(json.dumps(extra)); sys.exit(0)
        for tool in ("xmllint", "rsvg-convert"):
            if shutil.which(tool) is None:
                done(False, tool + " is not installed (apt-get install libxml2-utils librsvg2-bin)")
        r = subprocess.run(["xmllint", "--noout", svg], capture_output=True, text=True)
        if r.returncode != 0:
            done(False, "xmllint: " + r.stderr.strip())
        r = subprocess.run(["rsvg-convert", "--width", "160", "--keep-aspect-ratio", svg, "-o", png],
                   capture_output=True, text=True)
        if r.returncode != 0:
            done(False, "rsvg-convert: " + r.stderr.strip())
        data = open(png, "rb").read()
        if data[:8] != b"\x89PNG\r\n\x1a\n":
            done(False, "rsvg-convert did not write a PNG")
        pos, idat = 8, b""
        while pos < len(data):
            length, kind = struct.unpack(">I4s", data[pos:pos + 8])
            body = data[pos + 8:pos + 8 + length]
            pos += 12 + length
            if kind == b"IHDR":
                width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
            elif kind == b"IDAT":
                idat += body
        if depth != 8 or ctype not in (2, 6):
            done(False, "unexpected PNG format %d/%d" % (depth, ctype))
        bpp = 4 if ctype == 6 else 3
        stride = width * bpp
        raw = zlib.decompress(idat)
        rows, prev, pos = [], bytearray(stride), 0
        for _ in range(height):
            f = raw[pos]; line = bytearray(raw[pos + 1:pos + 1 + stride]); pos += 1 + stride
            if f == 1:
                for i in range(bpp, stride): line[i] = (line[i] + line[i - bpp]) & 255
            elif f == 2:
                for i in range(stride): line[i] = (line[i] + prev[i]) & 255
            elif f == 3:
                for i in range(stride): line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
            elif f == 4:
                for i in range(stride):
                    a = line[i - bpp] if i >= bpp else 0; b = prev[i]; c = prev[i - bpp] if i >= bpp else 0
                    p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            rows.append(bytes(line)); prev = line
        counts = {}
        for row in rows:
            for i in range(0, stride, bpp):
                px = row[i:i + bpp]; counts[px] = counts.get(px, 0) + 1
        total = width * height
        ink = 1 - max(counts.values()) / total
        if ink < 0.003:
            done(False, "rendered image is blank (%.4f of pixels differ from the background)" % ink,
         width=width, height=height, inkFraction=ink)
        done(True, "ok", width=width, height=height, inkFraction=ink)
        """#
}
