/// Colours, fonts and the series palette of a chart.
///
/// `.light` and `.dark` are fixed; `.adaptive` writes light colours plus a `prefers-color-scheme: dark`
/// style sheet, so one SVG follows the viewer's setting in a browser.
public struct ChartTheme: Sendable, Hashable {
    /// Colours of one appearance.
    public struct Colors: Sendable, Hashable {
        /// The chart's background.
        public var background: Color
        /// Titles, legend entries and annotations.
        public var text: Color
        /// Axis labels and "No data".
        public var secondaryText: Color
        /// Axis lines and ticks.
        public var axis: Color
        /// Grid lines.
        public var grid: Color
        /// Series colours in the order series get them; colour-blind-safe by default (Okabe and Ito).
        public var palette: [Color]
        /// The ends of the ramp used when colour encodes a number, such as in a heatmap.
        public var sequential: [Color]

        /// Creates a set of colours.
        public init(
            background: Color, text: Color, secondaryText: Color, axis: Color, grid: Color, palette: [Color],
            sequential: [Color]
        ) {
            self.background = background
            self.text = text
            self.secondaryText = secondaryText
            self.axis = axis
            self.grid = grid
            self.palette = palette
            self.sequential = sequential
        }
    }

    /// The colours written as SVG attributes.
    public var colors: Colors
    /// Colours for `prefers-color-scheme: dark`; nil for a fixed theme.
    public var darkColors: Colors?
    /// Base font size in pixels for tick labels and legends; titles are larger.
    public var fontSize: Double
    /// The CSS font family list written on the root element.
    public var fontFamily: String

    /// Creates a theme.
    public init(
        colors: Colors, darkColors: Colors? = nil, fontSize: Double = 11,
        fontFamily: String = ChartTheme.defaultFontFamily
    ) {
        self.colors = colors
        self.darkColors = darkColors
        self.fontSize = fontSize
        self.fontFamily = fontFamily
    }

    /// Text is measured with DejaVu Sans metrics, the widest of these, so labels fit with any of them.
    public static let defaultFontFamily = "DejaVu Sans,Verdana,Arial,sans-serif"

    /// Dark text on white.
    public static let light = ChartTheme(colors: .light)
    /// Light text on a near-black background.
    public static let dark = ChartTheme(colors: .dark)
    /// Light colours that switch to dark ones where the viewer prefers a dark colour scheme.
    public static let adaptive = ChartTheme(colors: .light, darkColors: .dark)
}

extension ChartTheme.Colors {
    /// Okabe and Ito's palette, reordered so the first colours contrast most; black comes last.
    public static let light = ChartTheme.Colors(
        background: Color(hex: 0xFFFFFF), text: Color(hex: 0x1C1C1E), secondaryText: Color(hex: 0x5A5A60),
        axis: Color(hex: 0x8A8A90), grid: Color(hex: 0xE3E3E8),
        palette: [
            Color(hex: 0x0072B2), Color(hex: 0xE69F00), Color(hex: 0x009E73), Color(hex: 0xD55E00),
            Color(hex: 0x56B4E9), Color(hex: 0xCC79A7), Color(hex: 0xF0E442), Color(hex: 0x000000),
        ],
        sequential: [Color(hex: 0xEFF6FC), Color(hex: 0x56B4E9), Color(hex: 0x0B3C68)])

    /// The same hues lightened for a dark background; white replaces black.
    public static let dark = ChartTheme.Colors(
        background: Color(hex: 0x17171A), text: Color(hex: 0xF2F2F7), secondaryText: Color(hex: 0xB0B0B8),
        axis: Color(hex: 0x75757D), grid: Color(hex: 0x323238),
        palette: [
            Color(hex: 0x3A9AD9), Color(hex: 0xF0B429), Color(hex: 0x22C49A), Color(hex: 0xF07A3A),
            Color(hex: 0x8FD0F5), Color(hex: 0xE39AC2), Color(hex: 0xF5EC6A), Color(hex: 0xFFFFFF),
        ],
        sequential: [Color(hex: 0x1E2633), Color(hex: 0x3A9AD9), Color(hex: 0xD8F0FF)])
}
