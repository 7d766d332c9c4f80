/// The CSS an adaptive theme embeds: colours are written as attributes for the light appearance, and this
/// style sheet overrides them by class where the viewer prefers a dark colour scheme.
enum ThemeStyleSheet {
    static func css(for theme: ChartTheme, scope: String = "") -> String? {
        guard let dark = theme.darkColors else { return nil }
        var rules = [
            ".bg{fill:\(dark.background.hexString)}",
            ".tx{fill:\(dark.text.hexString)}",
            ".t2{fill:\(dark.secondaryText.hexString)}",
            ".ax{stroke:\(dark.axis.hexString)}",
            ".gr{stroke:\(dark.grid.hexString)}",
        ]
        for (slot, color) in dark.palette.enumerated() {
            rules.append(".f\(slot){fill:\(color.hexString)}")
            rules.append(".s\(slot){stroke:\(color.hexString)}")
        }
        let scoped = scope.isEmpty ? rules : rules.map { "\(scope) \($0)" }
        return "@media (prefers-color-scheme:dark){" + scoped.joined() + "}"
    }
}

extension ChartTheme {
    /// The style sheet an adaptive theme embeds in each SVG (nil for a fixed theme), for a page that holds SVGs
    /// drawn without it: its rules apply under `scope` (a CSS selector, such as `svg.chart`).
    public func darkStyleSheet(scope: String) -> String? {
        ThemeStyleSheet.css(for: self, scope: scope)
    }
}
