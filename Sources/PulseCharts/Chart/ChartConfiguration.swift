struct AxisConfiguration: Sendable {
    var visibility: Visibility = .automatic
    var marks: [AxisMarks] = []
    var label: String?
    var scaleType: ScaleType = .automatic
    var domain: ScaleDomain = .automatic
}

enum ColorScaleConfiguration: Sendable {
    case automatic
    case mapping([(String, Color)])
    case range([Color])
    case numeric(lower: Double?, upper: Double?, range: [Color])
}

/// Everything set on a chart with modifiers.
struct ChartConfiguration: Sendable {
    var width: Double = 640
    var height: Double = 320
    var title: String?
    var summary: String?
    var x = AxisConfiguration()
    var y = AxisConfiguration()
    var colorScale: ColorScaleConfiguration = .automatic
    var symbolMapping: [(String, ChartSymbol)] = []
    var legendVisibility: Visibility = .automatic
    var legendPosition: LegendPosition = .automatic
    var tooltips: Visibility = .automatic
    var plotArea = ChartPlotArea()
    var theme: ChartTheme = .light
    var calendar: ChartCalendar = .utc
    var reduction: ChartDataReduction = .automatic
    /// Whether the root element carries the plot rectangle and scale domains as data attributes.
    var plotAttributes = false
}
