import PulseAnalytics
import PulseCharts
import PulseQuery

/// Draws the panels of one scope as read by ``DashboardQuery``, with ``PanelCharts``: names, titles, rates and
/// scales; nothing is read here.
struct PanelDrawing: Sendable {
    let data: PanelsData
    let frame: ChartFrame

    var members: ScopeMembers { data.members }
    var timeline: Timeline { data.timeline }
    var scopeValues: [BucketValues?] { data.scopeValues }

    func chart(for panel: PanelSpec, _ read: PanelData) -> Chart {
        switch (panel.kind, read) {
        case (.throughput, _): return throughput(panel)
        case (.errorsAndDrops, _): return errorsAndDrops(panel)
        case (.topTalkers(let kind), .totals(let ranked)): return topTalkers(panel, kind: kind, ranked: ranked)
        case (.trafficByGroup(let key), .lanes(let selection)):
            return PanelCharts.stackedTraffic(
                title: panel.title ?? "Traffic per \(key) of \(members.label): in ↑, out ↓", seriesLabel: key,
                times: timeline.midpoints, series: directionSeries(selection) { $0.group?.value ?? $0.name },
                frame: frame)
        case (.trafficByInterface, .lanes(let selection)):
            return PanelCharts.stackedTraffic(
                title: panel.title ?? "Traffic per interface of \(members.label): in ↑, out ↓",
                seriesLabel: "Interface", times: timeline.midpoints,
                series: directionSeries(selection, name: name(of:)), frame: frame)
        case (.utilisation, .lanes(let selection)): return utilisation(panel, selection)
        case (.weekdayHourHeatmap, .busyHours(let heat, let values)): return heatmap(panel, heat, values)
        case (.billingPercentile, .percentile(let read)): return percentile(panel, read)
        case (.bills(let kind), .bills(let ranked)): return bills(panel, kind: kind, ranked: ranked)
        default:
            preconditionFailure("panel \(panel.kind) was read as \(read)")
        }
    }

    // MARK: The scope's own series

    func throughput(_ panel: PanelSpec) -> Chart {
        let width = timeline.width
        return PanelCharts.throughput(
            title: panel.title ?? "Throughput of \(members.label): download ↑, upload ↓",
            times: timeline.midpoints,
            received: scopeValues.map { $0.flatMap { ChartRates.bits($0.traffic[.rxBytes], over: width) } },
            sent: scopeValues.map { $0.flatMap { ChartRates.bits($0.traffic[.txBytes], over: width) } },
            frame: frame)
    }

    func errorsAndDrops(_ panel: PanelSpec) -> Chart {
        let width = timeline.width
        let counters: [(String, TrafficCounter)] = [
            ("Receive errors", .rxErrors), ("Transmit errors", .txErrors), ("Receive drops", .rxDropped),
            ("Transmit drops", .txDropped),
        ]
        let series = counters.map { name, counter in
            ValueSeries(
                name: name,
                values: scopeValues.map { $0.flatMap { ChartRates.perSecond($0.traffic[counter], over: width) } })
        }
        // Without a single error the scale would centre on zero; errors are never negative.
        let none = series.allSatisfy { $0.values.allSatisfy { ($0 ?? 0) == 0 } }
        return PanelCharts.lines(
            title: panel.title ?? "Errors and drops of \(members.label)", seriesLabel: "Counter",
            valueLabel: "Packets/s", times: timeline.midpoints, series: series, format: .packetsPerSecond,
            yDomain: none ? 0...1 : nil, frame: frame)
    }

    func heatmap(_ panel: PanelSpec, _ heat: Timeline, _ values: [BucketValues?]) -> Chart {
        var samples = [(ChartDate, Double)]()
        for (slot, values) in values.enumerated() {
            guard let values,
                let bits = ChartRates.bits(values.traffic[.rxBytes] &+ values.traffic[.txBytes], over: heat.width)
            else { continue }
            samples.append((Timeline.date(heat.from + Int64(slot) * heat.width), bits))
        }
        let bins = WeekdayHourBins(samples, calendar: frame.calendar, aggregation: .mean) { $0 }
        let days = (heat.to - heat.from) / 86_400_000
        return PanelCharts.heatmap(
            title: panel.title
                ?? "Busy hours of \(members.label), last \(days) days (mean rate in + out)",
            bins: bins, calendar: frame.calendar)
    }

    func percentile(_ panel: PanelSpec, _ read: PercentileData?) -> Chart {
        let title = panel.title ?? "95th percentile of \(members.label), billing period so far"
        guard let read else {
            return PanelCharts.percentile(
                title: title, times: [], received: [], sent: [], bill: nil, billLabel: "", frame: frame)
        }
        let line = read.line
        let period = line.bill.period
        let values = read.values
        let bill = line.bill.value.map(ChartRates.bits(milliBytesPerSecond:))
        let method =
            switch line.bill.method {
            case .inbound: "inbound"
            case .outbound: "outbound"
            case .max: "larger of in and out"
            case .sum: "in + out"
            }
        let label = bill.map { "95th percentile (\(method)): \(ValueFormat.bitsPerSecond.format($0))" } ?? ""
        let calendar = data.billingCalendar
        return PanelCharts.percentile(
            title: panel.title
                ?? "95th percentile of \(members.label), billing period from \(calendar.localDate(period.from))",
            times: read.timeline.midpoints,
            received: values.map { $0.flatMap { ChartRates.bits($0.traffic[.rxBytes], over: Bill.interval) } },
            sent: values.map { $0.flatMap { ChartRates.bits($0.traffic[.txBytes], over: Bill.interval) } },
            bill: bill, billLabel: label,
            frame: ChartFrame(
                domain: Timeline.date(period.from)...Timeline.date(period.to), calendar: frame.calendar))
    }

    // MARK: Ranked series

    func topTalkers(
        _ panel: PanelSpec, kind: SeriesKind, ranked: [(series: SeriesRecord, values: BucketValues)]
    ) -> Chart {
        let shown = ranked.prefix(panel.limit)
        let names = DisplayNames.unique(shown.map { name(of: $0.series) })
        var bars = zip(shown, names).map { entry, name in
            RankedBar(
                name: name, received: Double(entry.values.traffic[.rxBytes]),
                sent: Double(entry.values.traffic[.txBytes]))
        }
        let rest = ranked.dropFirst(panel.limit)
        if !rest.isEmpty {
            bars.append(
                RankedBar(
                    name: DisplayNames.other(count: rest.count, avoiding: names),
                    received: Double(rest.reduce(0) { $0 + $1.values.traffic[.rxBytes] }),
                    sent: Double(rest.reduce(0) { $0 + $1.values.traffic[.txBytes] }), isOther: true))
        }
        return PanelCharts.topTalkers(
            title: panel.title ?? "Top \(Self.plural(kind)) of \(members.label) by bytes",
            categoryLabel: Self.singular(kind), bars: bars)
    }

    func utilisation(_ panel: PanelSpec, _ selection: RankedSelection) -> Chart {
        let width = timeline.width
        func shares(_ lanes: [SIMD4<Int64>?]) -> [Double?] {
            lanes.map { lane in
                lane.flatMap {
                    ChartRates.utilisation(received: $0[0], sent: $0[1], speedMbps: $0[2], over: width)
                }
            }
        }
        let names = DisplayNames.unique(selection.shown.map { name(of: $0.record) })
        var series = zip(selection.shown, names).map { ValueSeries(name: $1, values: shares($0.lanes)) }
        if let other = selection.other {
            series.append(
                ValueSeries(
                    name: DisplayNames.other(count: selection.otherCount, avoiding: names), values: shares(other)))
        }
        let highest = series.flatMap { $0.values.compactMap { $0 } }.max() ?? 0
        return PanelCharts.lines(
            title: panel.title ?? "Busiest interfaces of \(members.label): utilisation",
            seriesLabel: "Interface", valueLabel: "Utilisation", times: timeline.midpoints, series: series,
            format: .percent, yDomain: 0...max(1, highest), frame: frame)
    }

    func bills(_ panel: PanelSpec, kind: SeriesKind, ranked: [(series: SeriesRecord, value: Int64)]) -> Chart {
        let shown = ranked.prefix(panel.limit)
        let names = DisplayNames.unique(shown.map { name(of: $0.series) })
        var bars = zip(shown, names).map { entry, name in
            RankedBar(name: name, received: ChartRates.bits(milliBytesPerSecond: entry.value), sent: 0)
        }
        let rest = ranked.dropFirst(panel.limit)
        if !rest.isEmpty {
            bars.append(
                RankedBar(
                    name: DisplayNames.other(count: rest.count, avoiding: names) + ", summed",
                    received: ChartRates.bits(milliBytesPerSecond: rest.reduce(0) { $0 &+ $1.value }), sent: 0,
                    isOther: true))
        }
        return PanelCharts.bills(
            title: panel.title ?? "95th-percentile bills of \(members.label)'s \(Self.plural(kind)) so far",
            categoryLabel: Self.singular(kind), bars: bars)
    }

    // MARK: Names

    /// How a series is named in a panel: an interface of a host page by its own name, others as the store names
    /// them (`web-01/eth0`, `web-01`, `site=fra1`).
    func name(of record: SeriesRecord) -> String {
        if record.kind == .interface, members.record?.kind == .host {
            return record.interface?.description ?? record.name
        }
        return record.name
    }

    func directionSeries(
        _ selection: RankedSelection, name: (SeriesRecord) -> String
    ) -> [DirectionSeries] {
        let width = timeline.width
        func series(_ label: String, _ lanes: [SIMD4<Int64>?]) -> DirectionSeries {
            DirectionSeries(
                name: label, received: lanes.map { $0.flatMap { ChartRates.bits($0[0], over: width) } },
                sent: lanes.map { $0.flatMap { ChartRates.bits($0[1], over: width) } })
        }
        let names = DisplayNames.unique(selection.shown.map { name($0.record) })
        var result = zip(selection.shown, names).map { series($1, $0.lanes) }
        if let other = selection.other {
            result.append(series(DisplayNames.other(count: selection.otherCount, avoiding: names), other))
        }
        return result
    }

    static func singular(_ kind: SeriesKind) -> String {
        switch kind {
        case .interface: "Interface"
        case .host: "Host"
        case .group: "Group"
        case .fleet: "Fleet"
        }
    }

    static func plural(_ kind: SeriesKind) -> String {
        switch kind {
        case .interface: "interfaces"
        case .host: "hosts"
        case .group: "groups"
        case .fleet: "fleet"
        }
    }
}

/// Names as panels show them: long ones shortened, all distinct, and an "other" that no series is called.
enum DisplayNames {
    static let maximumLength = 40

    /// `names` with those longer than ``maximumLength`` cut with "…"; a cut that would make two alike keeps the
    /// name whole.
    static func unique(_ names: [String]) -> [String] {
        var result = names.map { name in
            name.count > maximumLength ? String(name.prefix(maximumLength - 1)) + "…" : name
        }
        var seen = [String: Int]()
        for name in result { seen[name, default: 0] += 1 }
        for index in result.indices where seen[result[index]]! > 1 { result[index] = names[index] }
        return result
    }

    /// `other (3 more)`, made distinct from `names`.
    static func other(count: Int, avoiding names: [String]) -> String {
        var label = "other (\(count) more)"
        while names.contains(label) { label += "*" }
        return label
    }
}
