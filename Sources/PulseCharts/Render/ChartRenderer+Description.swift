extension ChartRenderer {
    /// The kinds of mark in the chart as words, such as "Line and rule".
    private var kindsPhrase: String {
        var names: [String] = []
        for template in resolution.table.templates {
            let name: String
            switch template.kind {
            case .line: name = "line"
            case .area: name = "area"
            case .bar: name = "bar"
            case .point: name = "scatter"
            case .rule: name = "rule"
            case .rectangle:
                name = resolution.x.kind == .band && resolution.y.kind == .band ? "heatmap" : "rectangle"
            case .sector:
                if case .automatic = template.style.innerRadius ?? .automatic { name = "pie" } else { name = "donut" }
            }
            if !names.contains(name) { names.append(name) }
        }
        guard let first = names.first else { return "Empty" }
        let capitalised = first.prefix(1).uppercased() + first.dropFirst()
        if names.count == 1 { return capitalised }
        return capitalised + ", " + names.dropFirst().joined(separator: ", ")
    }

    private var channelLabels: (x: String, y: String) {
        var x = ""
        var y = ""
        for template in resolution.table.templates {
            if x.isEmpty && template.hasX && template.kind != .sector { x = template.xLabel }
            if y.isEmpty && template.hasY { y = template.yLabel }
        }
        return (x, y)
    }

    var accessibleTitle: String {
        if let title = configuration.title { return title }
        guard hasData else { return "Chart with no data" }
        let labels = channelLabels
        if sectorsOnly, let template = resolution.table.templates.first {
            return "\(kindsPhrase) chart of \(template.xLabel)"
                + (resolution.color.label.isEmpty ? "" : " by \(resolution.color.label)")
        }
        if !labels.x.isEmpty && !labels.y.isEmpty { return "\(kindsPhrase) chart of \(labels.y) by \(labels.x)" }
        return "\(kindsPhrase) chart"
    }

    /// A summary for screen readers and for anyone reading the file: what is plotted, over which range, and
    /// each series' extremes.
    var accessibleDescription: String {
        if let summary = configuration.summary { return summary }
        guard hasData else { return "No data." }
        var sentences: [String] = []
        let labels = channelLabels
        let count = resolution.stats.markCount
        sentences.append("\(kindsPhrase) chart with \(count) \(count == 1 ? "mark" : "marks").")
        if !sectorsOnly {
            if let x = rangeSentence(isX: true, label: labels.x) { sentences.append(x) }
            if let y = rangeSentence(isX: false, label: labels.y) { sentences.append(y) }
        }
        sentences += seriesSentences()
        sentences += resolution.notes
        return sentences.joined(separator: " ")
    }

    private func rangeSentence(isX: Bool, label: String) -> String? {
        let scale = isX ? resolution.x : resolution.y
        guard scale.hasDomain, !label.isEmpty else { return nil }
        if scale.kind == .band {
            let shown = scale.categories.prefix(12).joined(separator: ", ")
            let more = scale.categories.count > 12 ? " and \(scale.categories.count - 12) more" : ""
            return "\(label): \(scale.categories.count) categories (\(shown)\(more))."
        }
        let channel = isX ? resolution.stats.x : resolution.stats.y
        let lower = channel.lower
        let upper = channel.upper
        let type: ValueType = channel.sawDate ? .date : .number
        guard lower <= upper else { return nil }
        return "\(label) from \(text(of: lower, type: type, isX: isX)) to \(text(of: upper, type: type, isX: isX))."
    }

    private func seriesSentences() -> [String] {
        let color = resolution.color
        guard color.mode == .categorical, !color.entries.isEmpty else { return [] }
        let names = color.entries.map { $0.name }
        var sentences = [
            "\(names.count) \(color.label.isEmpty ? "series" : color.label + " values"): "
                + names.prefix(12).joined(separator: ", ") + (names.count > 12 ? " and \(names.count - 12) more." : ".")
        ]
        guard resolution.y.isContinuous, resolution.y.hasDomain else { return sentences }
        let count = color.entries.count
        let series = color.entries.map { resolution.stats.series[Int($0.key)] }
        let lows = series.map { $0.low }
        let highs = series.map { $0.high }
        let highAt = series.map { $0.highAt }
        let xTypes = series.map { $0.highAtType }
        let format = valueFormat(isX: false)
        for i in 0..<min(count, 8) where lows[i] <= highs[i] {
            var sentence = "\(names[i]) ranges from \(format.format(lows[i])) to \(format.format(highs[i]))"
            if xTypes[i] == .date || xTypes[i] == .number || xTypes[i] == .category, highAt[i].isFinite {
                sentence += ", highest at \(text(of: highAt[i], type: xTypes[i], isX: true))"
            }
            sentences.append(sentence + ".")
        }
        return sentences
    }
}
