import PulseAnalytics
import PulseCharts
import PulseQuery
import PulseStore

/// Reads what each panel of one dashboard needs through the window engine and draws it with ``PanelCharts``.
struct PanelReader: Sendable {
    let engine: WindowEngine
    let members: ScopeMembers
    let timeline: Timeline
    let level: RollupLevel
    let now: Int64
    let frame: ChartFrame
    /// The scope's own buckets over the timeline, read once for the panels that draw the scope.
    let scopeValues: [BucketValues?]

    var window: Window { Window(from: timeline.from, to: timeline.to) }

    func chart(for panel: PanelSpec) async throws -> Chart {
        switch panel.kind {
        case .throughput: return throughput(panel)
        case .topTalkers(let kind): return try await topTalkers(panel, kind: kind)
        case .trafficByGroup(let key): return try await trafficByGroup(panel, key: key)
        case .trafficByInterface: return try await trafficByInterface(panel)
        case .errorsAndDrops: return errorsAndDrops(panel)
        case .utilisation: return try await utilisation(panel)
        case .weekdayHourHeatmap: return try await heatmap(panel)
        case .billingPercentile: return try await percentile(panel)
        case .bills(let kind): return try await bills(panel, kind: kind)
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

    func heatmap(_ panel: PanelSpec) async throws -> Chart {
        // Busy hours need a week at least; hourly buckets or finer ones that fit in an hour.
        let span = max(timeline.to - timeline.from, 7 * 86_400_000)
        let hourly = engine.levels.filter { $0.level.width <= 3_600_000 && 3_600_000 % $0.level.width == 0 }
        let level =
            DashboardRenderer.level(preferred: .oneHour, length: span, now: now, levels: hourly) ?? .oneHour
        let to = level.bucketStart(timeline.to)
        let heat = Timeline(from: to - span, to: to, level: level)
        var samples = [(ChartDate, Double)]()
        if let record = members.record {
            let buckets =
                try await engine.store.buckets(
                    level: level, series: [record.id], from: heat.from, to: heat.to)[record.id] ?? []
            for (slot, values) in heat.values(buckets).enumerated() {
                guard let values,
                    let bits = ChartRates.bits(
                        values.traffic[.rxBytes] &+ values.traffic[.txBytes], over: level.width)
                else { continue }
                samples.append((Timeline.date(heat.from + Int64(slot) * level.width), bits))
            }
        }
        let bins = WeekdayHourBins(samples, calendar: frame.calendar, aggregation: .mean) { $0 }
        let days = span / 86_400_000
        return PanelCharts.heatmap(
            title: panel.title
                ?? "Busy hours of \(members.label), last \(days) days (mean rate in + out)",
            bins: bins, calendar: frame.calendar)
    }

    func percentile(_ panel: PanelSpec) async throws -> Chart {
        let title = panel.title ?? "95th percentile of \(members.label), billing period so far"
        guard let record = members.record else {
            return PanelCharts.percentile(
                title: title, times: [], received: [], sent: [], bill: nil, billLabel: "", frame: frame)
        }
        let line = try await engine.bill(record, containing: now, now: now)
        let period = line.bill.period
        let interval = RollupLevel(width: Bill.interval)
        let end = min(period.to, interval.bucketStart(now))
        let span = Timeline(from: period.from, to: end, level: interval)
        let buckets =
            try await engine.store.buckets(level: interval, series: [record.id], from: span.from, to: span.to)[
                record.id] ?? []
        let values = span.values(buckets)
        let bill = line.bill.value.map(ChartRates.bits(milliBytesPerSecond:))
        let method =
            switch line.bill.method {
            case .inbound: "inbound"
            case .outbound: "outbound"
            case .max: "larger of in and out"
            case .sum: "in + out"
            }
        let label = bill.map { "95th percentile (\(method)): \(ValueFormat.bitsPerSecond.format($0))" } ?? ""
        let calendar = engine.billing.calendar
        return PanelCharts.percentile(
            title: panel.title
                ?? "95th percentile of \(members.label), billing period from \(calendar.localDate(period.from))",
            times: span.midpoints,
            received: values.map { $0.flatMap { ChartRates.bits($0.traffic[.rxBytes], over: Bill.interval) } },
            sent: values.map { $0.flatMap { ChartRates.bits($0.traffic[.txBytes], over: Bill.interval) } },
            bill: bill, billLabel: label,
            frame: ChartFrame(
                domain: Timeline.date(period.from)...Timeline.date(period.to), calendar: frame.calendar))
    }

    // MARK: Ranked series

    func topTalkers(_ panel: PanelSpec, kind: SeriesKind) async throws -> Chart {
        let candidates = members.series(of: kind)
        let sums = try await engine.sums(
            candidates.map(\.id), window: window, now: now, fields: [.bytes, .coverage])
        let ranked = candidates.compactMap { record -> (SeriesRecord, BucketValues)? in
            guard let values = sums[record.id], values.hasData else { return nil }
            return (record, values)
        }.sorted { a, b in
            let (x, y) = (total(a.1), total(b.1))
            return x != y ? x > y : a.0.name < b.0.name
        }
        let shown = ranked.prefix(panel.limit)
        let names = DisplayNames.unique(shown.map { name(of: $0.0) })
        var bars = zip(shown, names).map { entry, name in
            RankedBar(
                name: name, received: Double(entry.1.traffic[.rxBytes]), sent: Double(entry.1.traffic[.txBytes]))
        }
        let rest = ranked.dropFirst(panel.limit)
        if !rest.isEmpty {
            bars.append(
                RankedBar(
                    name: DisplayNames.other(count: rest.count, avoiding: names),
                    received: Double(rest.reduce(0) { $0 + $1.1.traffic[.rxBytes] }),
                    sent: Double(rest.reduce(0) { $0 + $1.1.traffic[.txBytes] }), isOther: true))
        }
        return PanelCharts.topTalkers(
            title: panel.title ?? "Top \(Self.plural(kind)) of \(members.label) by bytes",
            categoryLabel: Self.singular(kind), bars: bars)
    }

    func trafficByGroup(_ panel: PanelSpec, key: String) async throws -> Chart {
        let groups = members.groups.filter { $0.group?.key == key }
        let selection = try await ranked(groups, limit: panel.limit, rank: Self.byBytes)
        return PanelCharts.stackedTraffic(
            title: panel.title ?? "Traffic per \(key) of \(members.label): in ↑, out ↓", seriesLabel: key,
            times: timeline.midpoints, series: directionSeries(selection) { $0.group?.value ?? $0.name },
            frame: frame)
    }

    func trafficByInterface(_ panel: PanelSpec) async throws -> Chart {
        let selection = try await ranked(members.counted, limit: panel.limit, rank: Self.byBytes)
        return PanelCharts.stackedTraffic(
            title: panel.title ?? "Traffic per interface of \(members.label): in ↑, out ↓", seriesLabel: "Interface",
            times: timeline.midpoints, series: directionSeries(selection, name: name(of:)), frame: frame)
    }

    func utilisation(_ panel: PanelSpec) async throws -> Chart {
        var speeds = [Int64: Int64]()
        for interface in members.counted { speeds[interface.id] = Int64(interface.facts?.speedMbps ?? 0) }
        let candidates = members.counted.filter { (speeds[$0.id] ?? 0) > 0 }
        let selection =
            candidates.count <= panel.limit
            ? try await ranked(candidates, limit: panel.limit, speeds: speeds, rank: Self.byUtilisation)
            : try await rankedByWindowUtilisation(candidates, limit: panel.limit, speeds: speeds)
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

    /// The busiest of many interfaces without reading every one's buckets: ranked by their utilisation over the
    /// whole range (the larger direction's bytes over the time their data covers and their link speed), from sums
    /// the store keeps at coarse levels; only the shown ones are read slot by slot. "Other" is the rest together:
    /// per slot, the scope's counted bytes less the shown interfaces', over the rest's link speeds — so bytes of a
    /// counted interface of unknown speed count toward it, and a slot where some of the rest did not report reads
    /// a little low. (Ranking all of 10,000 interfaces slot by slot took 7 million rows for the last 30 days.)
    func rankedByWindowUtilisation(
        _ candidates: [SeriesRecord], limit: Int, speeds: [Int64: Int64]
    ) async throws -> RankedSelection {
        let sums = try await engine.sums(
            candidates.map(\.id), window: window, now: now, fields: [.bytes, .coverage])
        var values = [Int64: Int64]()
        for record in candidates {
            guard let sum = sums[record.id], sum.hasData, let speed = speeds[record.id],
                let rate = RateMath.rate(
                    bytes: max(sum.traffic[.rxBytes], sum.traffic[.txBytes]), milliseconds: sum.coveredMilliseconds),
                let share = RateMath.utilisation(rate: rate, speedMbps: speed)
            else { continue }
            values[record.id] = share
        }
        let ordered = candidates.filter { values[$0.id] != nil }.sorted { a, b in
            let (x, y) = (values[a.id]!, values[b.id]!)
            return x != y ? x > y : a.name < b.name
        }
        let top = Array(ordered.prefix(limit))
        let buckets = try await engine.store.buckets(
            level: level, series: top.map(\.id), from: timeline.from, to: timeline.to)
        var rest = scopeValues.map { values in
            values.map { SIMD4($0.traffic[.rxBytes], $0.traffic[.txBytes], 0, 1) }
        }
        let shown = top.map { record in
            let lanes = timeline.lanes(buckets[record.id] ?? [], speed: speeds[record.id] ?? 0)
            for index in lanes.indices {
                if let lane = lanes[index], rest[index] != nil { rest[index]! &-= SIMD4(lane[0], lane[1], 0, 0) }
            }
            return RankedLanes(record: record, lanes: lanes)
        }
        let others = ordered.dropFirst(limit)
        guard !others.isEmpty else { return RankedSelection(shown: shown, other: nil, otherCount: 0) }
        let speed = others.reduce(0) { $0 + (speeds[$1.id] ?? 0) }
        let other = rest.map { lane in
            lane.map { SIMD4(max($0[0], 0), max($0[1], 0), speed, 1) }
        }
        return RankedSelection(shown: shown, other: other, otherCount: others.count)
    }

    func bills(_ panel: PanelSpec, kind: SeriesKind) async throws -> Chart {
        let candidates = members.series(of: kind)
        let lines = try await engine.bills(candidates, containing: { _ in now }, now: now)
        let ranked = lines.compactMap { line -> (SeriesRecord, Int64)? in
            line.bill.value.map { (line.series, $0) }
        }.sorted { a, b in a.1 != b.1 ? a.1 > b.1 : a.0.name < b.0.name }
        let shown = ranked.prefix(panel.limit)
        let names = DisplayNames.unique(shown.map { name(of: $0.0) })
        var bars = zip(shown, names).map { entry, name in
            RankedBar(name: name, received: ChartRates.bits(milliBytesPerSecond: entry.1), sent: 0)
        }
        let rest = ranked.dropFirst(panel.limit)
        if !rest.isEmpty {
            bars.append(
                RankedBar(
                    name: DisplayNames.other(count: rest.count, avoiding: names) + ", summed",
                    received: ChartRates.bits(milliBytesPerSecond: rest.reduce(0) { $0 &+ $1.1 }), sent: 0,
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

    private func total(_ values: BucketValues) -> Int64 { values.traffic[.rxBytes] &+ values.traffic[.txBytes] }

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
