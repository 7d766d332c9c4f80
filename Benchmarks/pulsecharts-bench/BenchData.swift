import PulseCharts

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The benchmark's data: deterministic, so our render and rrdtool see exactly the same values.
enum BenchData {
    /// One day at one-second resolution, four interfaces.
    static let lineCount = 86_400
    static let lineStart = 1_735_689_600
    static let interfaces = ["eth0", "eth1", "eth2", "eth3"]
    /// One day at one-minute resolution per dashboard panel.
    static let panelCount = 1440
    static let panelStart = 1_735_689_600

    struct Generator {
        var state: UInt64

        mutating func next() -> Double {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
        }
    }

    /// A daily wave with noise and rare spikes, in bits per second (whole numbers, as rrdtool stores them).
    static func wave(count: Int, step: Double, scale: Double, phase: Double, seed: UInt64) -> [Double] {
        var generator = Generator(state: seed)
        var values = [Double](repeating: 0, count: count)
        var noise = 0.0
        for i in 0..<count {
            let t = Double(i) * step / 86_400 * 2 * Double.pi
            noise = noise * 0.98 + (generator.next() - 0.5) * 0.08
            var value = scale * (1.1 + sin(t + phase)) * (1 + noise)
            if generator.next() < 0.0005 { value *= 3 }
            values[i] = max(value, 0).rounded()
        }
        return values
    }

    /// Chart (a): four interfaces, one sample a second for a day.
    static func line() -> BenchTable {
        BenchTable(
            times: (0..<lineCount).map { ChartDate(secondsSinceEpoch: Double(lineStart + $0 + 1)) },
            series: interfaces.enumerated().map { n, name in
                (name, wave(count: lineCount, step: 1, scale: 4e7, phase: Double(n) * 1.6, seed: UInt64(n + 1)))
            })
    }

    /// The title of dashboard panel `index`.
    static func panelName(_ index: Int) -> String {
        "host\(index / 2 + 1) eth\(index % 2)"
    }

    /// Dashboard panel `index` of chart (b): received (`rx`) and sent (`tx`) bits per second, one sample a minute.
    static func panel(_ index: Int) -> BenchTable {
        let scale = 2e7 * Double(index % 4 + 1)
        let phase = Double(index)
        let received = wave(count: panelCount, step: 60, scale: scale, phase: phase, seed: UInt64(100 + index))
        let sent = wave(count: panelCount, step: 60, scale: scale * 0.4, phase: phase + 1, seed: UInt64(200 + index))
        return BenchTable(
            times: (0..<panelCount).map { ChartDate(secondsSinceEpoch: Double(panelStart + ($0 + 1) * 60)) },
            series: [("rx", received), ("tx", sent)])
    }
}
