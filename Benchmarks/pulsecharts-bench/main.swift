import PulseCharts

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The chart benchmark; scripts/bench-charts.sh runs it next to rrdtool.
//
//   pulsecharts-bench data DIR
//       write the data: DIR/line.bin and DIR/panel-NN.bin for `graph`, and the same values as rrdtool update
//       lines in DIR/line.updates and DIR/panel-NN.updates
//   pulsecharts-bench graph line OUT.svg DIR/line.bin
//   pulsecharts-bench graph dashboard OUT.svg DIR/panel-00.bin ... DIR/panel-11.bin
//   pulsecharts-bench graph panel OUT.svg DIR/panel-NN.bin TITLE
//       what `rrdtool graph` does: read the data from disk, render, write the SVG, exit; the script times the
//       whole process from the shell, as it times rrdtool. A dashboard is one invocation; a panel is one of its
//       charts on its own, for timing the dashboard as 12 invocations like rrdtool's
//   pulsecharts-bench render DIR [N]
//       the library call as netpulsed makes it: data already in memory, timed inside the process, N times
//       (default 15); writes DIR/line.svg and DIR/dashboard.svg

let usage = """
    usage: pulsecharts-bench data DIR
           pulsecharts-bench graph line OUT.svg DATA.bin
           pulsecharts-bench graph dashboard OUT.svg DATA.bin...
           pulsecharts-bench graph panel OUT.svg DATA.bin TITLE
           pulsecharts-bench render DIR [REPETITIONS]
    """

struct UsageError: Error {}

func writeData(to directory: String) throws {
    let line = BenchData.line()
    try line.write(to: "\(directory)/line.bin")
    try BenchIO.write(rrdUpdates(line), to: "\(directory)/line.updates")
    for index in 0..<12 {
        let panel = BenchData.panel(index)
        let name = "\(directory)/panel-\(index < 10 ? "0" : "")\(index)"
        try panel.write(to: "\(name).bin")
        try BenchIO.write(rrdUpdates(panel), to: "\(name).updates")
    }
    print("wrote \(directory)/line.bin, line.updates and 12 panel files of each kind")
}

/// `TIME:V1:V2…` lines for `rrdtool update`; the values are whole numbers, so both sides see the same data.
func rrdUpdates(_ table: BenchTable) -> String {
    var text = ""
    text.reserveCapacity(table.times.count * (12 + table.series.count * 10))
    for (i, time) in table.times.enumerated() {
        text += "\(Int64(time.secondsSinceEpoch))"
        for s in table.series { text += ":\(Int(s.values[i]))" }
        text += "\n"
    }
    return text
}

func graph(kind: String, output: String, inputs: [String]) throws {
    switch kind {
    case "line" where inputs.count == 1:
        let series = BenchCharts.lineSeries(try BenchTable.read(from: inputs[0]))
        try BenchIO.write(BenchCharts.line(series).renderSVG(), to: output)
    case "dashboard" where !inputs.isEmpty:
        // Panels are titled by position, as the script gives rrdtool each panel's title on its command line.
        let panels = try inputs.enumerated().map { (BenchData.panelName($0), try BenchTable.read(from: $1)) }
        try BenchIO.write(BenchCharts.dashboard(panels).renderSVG(), to: output)
    case "panel" where inputs.count == 2:
        let chart = BenchCharts.panel(inputs[1], try BenchTable.read(from: inputs[0]))
        try BenchIO.write(
            chart.frame(width: BenchCharts.panelWidth, height: BenchCharts.panelHeight).renderSVG(), to: output)
    default:
        throw UsageError()
    }
}

func renderInMemory(directory: String, repetitions: Int) throws {
    // The samples are in memory before timing starts, as they are in the daemon; what is timed is building the
    // chart from them, rendering and writing the file.
    let lineSeries = BenchCharts.lineSeries(BenchData.line())
    let lineSamples = BenchCharts.lineSamples(lineSeries)
    let panels = (0..<12).map { (BenchData.panelName($0), BenchData.panel($0)) }

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
        let start = BenchClock.now()
        dashboardSVG = BenchCharts.dashboard(panels).renderSVG()
        try BenchIO.write(dashboardSVG, to: "\(directory)/dashboard.svg")
        dashboardTimes.append(BenchClock.now() - start)
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
}

let arguments = CommandLine.arguments
do {
    switch (arguments.count > 1 ? arguments[1] : "", arguments.count) {
    case ("data", 3):
        try writeData(to: arguments[2])
    case ("graph", 5...):
        try graph(kind: arguments[2], output: arguments[3], inputs: Array(arguments[4...]))
    case ("render", 3...4):
        let repetitions = arguments.count > 3 ? max(Int(arguments[3]) ?? 15, 1) : 15
        try renderInMemory(directory: arguments[2], repetitions: repetitions)
    default:
        throw UsageError()
    }
} catch is UsageError {
    printError(usage)
    exit(2)
} catch {
    printError("pulsecharts-bench: \(error)")
    exit(1)
}
