/// The CSS an adaptive theme embeds: colours are written as attributes for the light appearance, and this
/// style sheet overrides them by class where the viewer prefers a dark colour scheme.
enum ThemeStyleSheet {
    static func css(for theme: ChartTheme) -> String? {
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
        return "@media (prefers-color-scheme:dark){" + rules.joined() + "}"
    }
}
