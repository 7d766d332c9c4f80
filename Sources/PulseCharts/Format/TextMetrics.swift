/// Estimates text widths without a font engine, so layout is the same everywhere.
///
/// Advances are DejaVu Sans's, in ems, rounded up. DejaVu is wider than Arial or Helvetica, so text laid out with
/// these numbers fits whichever of them the viewer has.
enum TextMetrics {
    static func width(_ text: String, fontSize: Double, bold: Bool = false) -> Double {
        var ems = 0.0
        for scalar in text.unicodeScalars {
            let v = scalar.value
            if v >= 32 && v < 127 {
                ems += advances[Int(v - 32)]
            } else if v >= 0x2E80 {
                ems += 1.0
            } else {
                ems += 0.75
            }
        }
        return ems * fontSize * (bold ? 1.08 : 1.0)
    }

    /// `text` shortened with an ellipsis so that it is at most `width` wide; unchanged when it fits.
    static func truncate(_ text: String, toWidth width: Double, fontSize: Double, bold: Bool = false) -> String {
        guard self.width(text, fontSize: fontSize, bold: bold) > width else { return text }
        var characters = Array(text)
        while !characters.isEmpty
            && self.width(String(characters) + "…", fontSize: fontSize, bold: bold) > width
        {
            characters.removeLast()
        }
        return characters.isEmpty ? "" : String(characters) + "…"
    }

    /// Height of one line of text, baseline to baseline.
    static func lineHeight(fontSize: Double) -> Double {
        fontSize * 1.25
    }

    /// Ascent above the baseline, for placing text by its top.
    static func ascent(fontSize: Double) -> Double {
        fontSize * 0.76
    }

    // Printable ASCII from space (32) to tilde (126).
    private static let advances: [Double] = [
        0.318, 0.401, 0.460, 0.838, 0.636, 0.950, 0.780, 0.275, 0.390, 0.390, 0.500, 0.838, 0.318, 0.361, 0.318, 0.337,
        0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.337, 0.337, 0.838, 0.838, 0.838, 0.531,
        1.000, 0.684, 0.686, 0.698, 0.770, 0.632, 0.575, 0.775, 0.752, 0.295, 0.295, 0.656, 0.557, 0.863, 0.748, 0.787,
        0.603, 0.787, 0.695, 0.635, 0.611, 0.732, 0.684, 0.989, 0.685, 0.611, 0.685, 0.390, 0.337, 0.390, 0.838, 0.500,
        0.500, 0.613, 0.635, 0.550, 0.635, 0.615, 0.352, 0.635, 0.634, 0.278, 0.278, 0.579, 0.278, 0.974, 0.634, 0.612,
        0.635, 0.635, 0.411, 0.521, 0.392, 0.634, 0.592, 0.818, 0.592, 0.592, 0.525, 0.636, 0.337, 0.636, 0.838,
    ]
}
