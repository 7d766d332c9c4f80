/// A chart: data plus marks, drawn to SVG text.
///
/// ```swift
/// let chart = Chart(samples) { sample in
///     LineMark(x: .value("Time", sample.time), y: .value("Rate", sample.bitsPerSecond))
///         .foregroundStyle(by: .value("Interface", sample.interface))
/// }
/// .chartYAxis { AxisMarks(format: .bitsPerSecond) }
/// .frame(width: 640, height: 240)
/// let svg = chart.renderSVG()
/// ```
///
/// The content closure runs while the chart is created; the chart keeps only the marks' values, so the data need
/// not be `Sendable` and a chart can be rendered on any thread. Rendering is pure: the same chart always gives
/// byte-identical SVG.
public struct Chart: Sendable {
    var table: MarkTable
    var configuration = ChartConfiguration()

    @usableFromInline
    init(table: MarkTable) {
        self.table = table
    }

    /// A chart of the marks written in `content`.
    @inlinable
    public init<Content: ChartContent>(@ChartContentBuilder content: () -> Content) {
        var collector = ChartContentCollector()
        content()._collect(into: &collector)
        self.init(table: collector.table)
    }

    /// A chart with the marks written in `content` for each element of `data`, as `Chart(data) { ... }` in
    /// Swift Charts.
    @inlinable
    public init<Data: Sequence, Content: ChartContent>(
        _ data: Data, @ChartContentBuilder content: (Data.Element) -> Content
    ) {
        var collector = ChartContentCollector()
        collector.table.records.reserveCapacity(data.underestimatedCount)
        for element in data {
            content(element)._collect(into: &collector)
        }
        self.init(table: collector.table)
    }

    /// A chart with the marks written in `content` for each element of `data`; `id` is accepted for source
    /// compatibility with Swift Charts and not needed, since charts are drawn once.
    @inlinable
    public init<Data: Sequence, ID: Hashable, Content: ChartContent>(
        _ data: Data, id: KeyPath<Data.Element, ID>, @ChartContentBuilder content: (Data.Element) -> Content
    ) {
        self.init(data, content: content)
    }

    /// Draws the chart as a standalone SVG document.
    ///
    /// - Parameter idPrefix: Prefix of the `id`s inside the SVG (clip paths, gradients, title); give charts that
    ///   share one HTML page different prefixes.
    public func renderSVG(idPrefix: String = "pc") -> String {
        renderSVG(idPrefix: idPrefix, styleSheet: true)
    }

    /// Draws the chart as an SVG document; without `styleSheet`, an adaptive theme's dark colours are left to the
    /// page the SVG is placed in (``ChartTheme/darkStyleSheet(scope:)``), as a page whose Content-Security-Policy
    /// allows no inline style needs.
    public func renderSVG(idPrefix: String = "pc", styleSheet: Bool) -> String {
        var writer = SVGWriter()
        var renderer = ChartRenderer(chart: self, idPrefix: idPrefix)
        renderer.embedsStyleSheet = styleSheet
        writer.write(renderer.document())
        return writer.text
    }

    func modified(_ change: (inout ChartConfiguration) -> Void) -> Chart {
        var copy = self
        change(&copy.configuration)
        return copy
    }
}
