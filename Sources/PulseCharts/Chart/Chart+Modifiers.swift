extension Chart {
    /// The size of the SVG in pixels.
    public func frame(width: Double, height: Double) -> Chart {
        modified {
            $0.width = max(width, 1)
            $0.height = max(height, 1)
        }
    }

    /// A title drawn above the plot; it is also the SVG's `<title>`.
    public func chartTitle(_ title: String) -> Chart {
        modified { $0.title = title }
    }

    /// Replaces the generated summary in the SVG's `<desc>`.
    public func chartDescription(_ description: String) -> Chart {
        modified { $0.summary = description }
    }

    /// The x scale's domain and type; by default both are inferred from the values of all marks.
    public func chartXScale(domain: ScaleDomain = .automatic, type: ScaleType = .automatic) -> Chart {
        modified {
            $0.x.domain = domain
            $0.x.scaleType = type
        }
    }

    /// A fixed numeric x domain.
    public func chartXScale(domain: ClosedRange<Double>, type: ScaleType = .automatic) -> Chart {
        chartXScale(domain: .numbers(domain), type: type)
    }

    /// A fixed integer x domain.
    public func chartXScale(domain: ClosedRange<Int>, type: ScaleType = .automatic) -> Chart {
        chartXScale(domain: .numbers(Double(domain.lowerBound)...Double(domain.upperBound)), type: type)
    }

    /// A fixed time x domain.
    public func chartXScale(domain: ClosedRange<ChartDate>) -> Chart {
        chartXScale(domain: .dates(domain), type: .date)
    }

    /// Fixed x categories, in this order.
    public func chartXScale(domain: [String]) -> Chart {
        chartXScale(domain: .categories(domain), type: .category)
    }

    /// The y scale's domain and type; by default both are inferred from the values of all marks.
    public func chartYScale(domain: ScaleDomain = .automatic, type: ScaleType = .automatic) -> Chart {
        modified {
            $0.y.domain = domain
            $0.y.scaleType = type
        }
    }

    /// A fixed numeric y domain, such as `0...100` for percentages.
    public func chartYScale(domain: ClosedRange<Double>, type: ScaleType = .automatic) -> Chart {
        chartYScale(domain: .numbers(domain), type: type)
    }

    /// A fixed integer y domain.
    public func chartYScale(domain: ClosedRange<Int>, type: ScaleType = .automatic) -> Chart {
        chartYScale(domain: .numbers(Double(domain.lowerBound)...Double(domain.upperBound)), type: type)
    }

    /// A fixed time y domain.
    public func chartYScale(domain: ClosedRange<ChartDate>) -> Chart {
        chartYScale(domain: .dates(domain), type: .date)
    }

    /// Fixed y categories, from top to bottom.
    public func chartYScale(domain: [String]) -> Chart {
        chartYScale(domain: .categories(domain), type: .category)
    }

    /// Shows or hides the x axis.
    public func chartXAxis(_ visibility: Visibility) -> Chart {
        modified { $0.x.visibility = visibility }
    }

    /// Shows or hides the y axis.
    public func chartYAxis(_ visibility: Visibility) -> Chart {
        modified { $0.y.visibility = visibility }
    }

    /// The x axis's marks: values, position, grid lines, ticks and labels.
    public func chartXAxis(@AxisMarksBuilder content: () -> [AxisMarks]) -> Chart {
        let marks = content()
        return modified {
            $0.x.marks = marks
            $0.x.visibility = .visible
        }
    }

    /// The y axis's marks: values, position, grid lines, ticks and labels.
    public func chartYAxis(@AxisMarksBuilder content: () -> [AxisMarks]) -> Chart {
        let marks = content()
        return modified {
            $0.y.marks = marks
            $0.y.visibility = .visible
        }
    }

    /// A title for the x axis, drawn under its labels.
    public func chartXAxisLabel(_ label: String) -> Chart {
        modified { $0.x.label = label }
    }

    /// A title for the y axis, drawn beside its labels.
    public func chartYAxisLabel(_ label: String) -> Chart {
        modified { $0.y.label = label }
    }

    /// Fixed colours for series values, in legend order: `["Sent": .blue, "Written": .orange]`.
    public func chartForegroundStyleScale(_ mapping: KeyValuePairs<String, Color>) -> Chart {
        let pairs = mapping.map { ($0.key, $0.value) }
        return modified { $0.colorScale = .mapping(pairs) }
    }

    /// Fixed colours for the series values in `domain`, in order.
    public func chartForegroundStyleScale(domain: [String], range: [Color]) -> Chart {
        let pairs = range.isEmpty ? [] : domain.enumerated().map { ($0.element, range[$0.offset % range.count]) }
        return modified { $0.colorScale = .mapping(pairs) }
    }

    /// The colours series get, in order, instead of the theme's palette; or the ramp when colour encodes a number.
    public func chartForegroundStyleScale(range: [Color]) -> Chart {
        modified { $0.colorScale = .range(range) }
    }

    /// A colour ramp over a fixed numeric domain, for heatmaps that must compare across charts.
    public func chartForegroundStyleScale(domain: ClosedRange<Double>, range: [Color]) -> Chart {
        modified { $0.colorScale = .numeric(lower: domain.lowerBound, upper: domain.upperBound, range: range) }
    }

    /// Fixed symbols for series values, in legend order.
    public func chartSymbolScale(_ mapping: KeyValuePairs<String, ChartSymbol>) -> Chart {
        let pairs = mapping.map { ($0.key, $0.value) }
        return modified { $0.symbolMapping = pairs }
    }

    /// Shows or hides the legend.
    public func chartLegend(_ visibility: Visibility) -> Chart {
        modified { $0.legendVisibility = visibility }
    }

    /// Where the legend goes.
    public func chartLegend(position: LegendPosition) -> Chart {
        modified {
            $0.legendPosition = position
            if $0.legendVisibility == .hidden { $0.legendVisibility = .automatic }
        }
    }

    /// Styles the plot area: `.chartPlotStyle { $0.background(.gray.opacity(0.08)).border(.gray) }`.
    public func chartPlotStyle(_ style: (ChartPlotArea) -> ChartPlotArea) -> Chart {
        let area = style(configuration.plotArea)
        return modified { $0.plotArea = area }
    }

    /// Colours and fonts: `.light` (the default), `.dark`, `.adaptive` or your own.
    public func chartTheme(_ theme: ChartTheme) -> Chart {
        modified { $0.theme = theme }
    }

    /// The calendar instants are read on: time zone offset, first weekday and names.
    public func chartCalendar(_ calendar: ChartCalendar) -> Chart {
        modified { $0.calendar = calendar }
    }

    /// Whether marks carry a `<title>` with their values, shown as a tooltip by browsers.
    public func chartTooltips(_ visibility: Visibility) -> Chart {
        modified { $0.tooltips = visibility }
    }

    /// How long line and area series are thinned before drawing.
    public func chartDataReduction(_ reduction: ChartDataReduction) -> Chart {
        modified { $0.reduction = reduction }
    }

    /// Whether the SVG's root element says where the plot is and what its scales span (`data-plot`,
    /// `data-x-scale`, `data-x-domain`, `data-y-scale`, `data-y-domain`), so a script in a page can map the pointer
    /// to data the way Swift Charts' chart proxy does. Hidden by default.
    public func chartPlotAttributes(_ visibility: Visibility) -> Chart {
        modified { $0.plotAttributes = visibility == .visible }
    }
}
