import PulseCharts

/// Small fixed data sets shared by the golden tests.
enum Fixtures {
    struct Sales: Sendable {
        var day: String
        var city: String
        var count: Int
    }

    static let weekdaySales: [Sales] = [
        Sales(day: "Mon", city: "Lyon", count: 12), Sales(day: "Tue", city: "Lyon", count: 7),
        Sales(day: "Wed", city: "Lyon", count: 15), Sales(day: "Thu", city: "Lyon", count: 4),
        Sales(day: "Fri", city: "Lyon", count: 9), Sales(day: "Mon", city: "Graz", count: 5),
        Sales(day: "Tue", city: "Graz", count: 11), Sales(day: "Wed", city: "Graz", count: 6),
        Sales(day: "Thu", city: "Graz", count: 13), Sales(day: "Fri", city: "Graz", count: 8),
    ]

    /// Hourly rates of two interfaces over a day, with a two-hour gap in the second.
    static func hourly() -> [RateSample] {
        var samples: [RateSample] = []
        for (n, name) in ["eth0", "eth1"].enumerated() {
            for hour in 0..<24 {
                let base = Double(20 + n * 15) * 1e6
                let wave = SampleData.sinApprox(Double(hour) / 24 * 2 * Double.pi - 2 + Double(n)) * 12e6
                var rate: Double? = base + wave + Double((hour * 7 + n * 3) % 5) * 1e6
                if n == 1 && (hour == 9 || hour == 10) { rate = nil }
                samples.append(
                    RateSample(
                        time: SampleData.start.advanced(by: Double(hour) * 3600),
                        interface: name, bitsPerSecond: rate))
            }
        }
        return samples
    }

    static func hour(_ h: Double) -> ChartDate {
        SampleData.start.advanced(by: h * 3600)
    }
}
