import PulseCharts

// Renders the two benchmark charts and reports the median time and the file size, or writes the same data as
// rrdtool update lines so scripts/bench-charts.sh can time `rrdtool graph` on it.
//
//   pulsecharts-bench data DIR          write DIR/line.updates and DIR/panel-NN.updates
//   pulsecharts-bench render DIR [N]    render N times (default 15), write DIR/line.svg and DIR/dashboard.svg
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

let arguments = CommandLine.arguments
guard arguments.count >= 3, arguments[1] == "data" || arguments[1] == "render" else {
    print("usage: pulsecharts-bench data DIR | render DIR [REPETITIONS]")
    exit(2)
}
let directory = arguments[2]
let repetitions = arguments.count > 3 ? max(Int(arguments[3]) ?? 15, 1) : 15

if arguments[1] == "data" {
    let line = BenchData.lineSeries()
    var text = ""
    text.reserveCapacity(BenchData.lineCount * 48)
    for i in 0..<BenchData.lineCount {
        text += "\(BenchData.lineStart + i + 1)"
        for series in line.values { text += ":\(Int(series[i]))" }
        text += "\n"
    }
    try BenchIO.write(text, to: "\(directory)/line.updates")
    for panel in 0..<12 {
        let data = BenchData.panel(panel)
        var text = ""
        for i in 0..<BenchData.panelCount {
            text += "\(BenchData.panelStart + (i + 1) * 60):\(Int(data.received[i])):\(Int(data.sent[i]))\n"
        }
        try BenchIO.write(text, to: "\(directory)/panel-\(panel < 10 ? "0" : "")\(panel).updates")
    }
    print("wrote \(directory)/line.updates and 12 panel files")
    exit(0)
}

// The samples are in memory before timing starts, as they would be in the daemon; what is timed is building the
// chart from them, rendering and writing the file.
let lineSeries = BenchCharts.lineSeries(BenchData.lineSeries())
let lineSamples = BenchCharts.lineSamples(lineSeries)
let panels = (0..<12).map(BenchData.panel)

var lineTimes: [Double] = []
var lineSVG = ""
var dashboardTimes: [Double] = []
var dashboardSVG = ""
for _ in 0..<repetitions {
    let start = BenchClock.now()
    lineSVG = BenchCharts.line(lineSeries).renderSVG()
    try BenchIO.write(lineSVG, to: "\(directory)/line.svg")
    lineTimes.append(BenchClock.now() - start)
}
for _ in 0..<repetitions {
    let dashboardStart = BenchClock.now()
    dashboardSVG = BenchCharts.dashboard(panels).renderSVG()
    try BenchIO.write(dashboardSVG, to: "\(directory)/dashboard.svg")
    dashboardTimes.append(BenchClock.now() - dashboardStart)
}
// Where the line chart's time goes: building the chart, then rendering it to text; and the same chart written
// with one LineMark per point.
var buildTimes: [Double] = []
var renderTimes: [Double] = []
var perPointTimes: [Double] = []
for _ in 0..<repetitions {
    let start = BenchClock.now()
    let chart = BenchCharts.line(lineSeries)
    let built = BenchClock.now()
    _ = chart.renderSVG()
    renderTimes.append(BenchClock.now() - built)
    buildTimes.append(built - start)
    let perPointStart = BenchClock.now()
    _ = BenchCharts.linePerPoint(lineSamples).renderSVG()
    perPointTimes.append(BenchClock.now() - perPointStart)
}
func median(_ times: [Double]) -> String {
    BenchClock.format(BenchClock.median(times))
}
print(
    "line      build_median_ms=\(median(buildTimes)) render_median_ms=\(median(renderTimes))"
        + " per_point_marks_median_ms=\(median(perPointTimes))"
)
print("line      median_ms=\(median(lineTimes)) bytes=\(lineSVG.utf8.count) repetitions=\(repetitions)")
print("dashboard median_ms=\(median(dashboardTimes)) bytes=\(dashboardSVG.utf8.count) repetitions=\(repetitions)")
