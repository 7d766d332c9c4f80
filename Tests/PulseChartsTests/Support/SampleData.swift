import PulseCharts

/// A small deterministic generator (SplitMix64) so property tests and sample data are the same on every run.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func unit() -> Double {
        Double(next() >> 11) / Double(1 << 53)
    }
}

/// One sample of an interface's traffic.
struct RateSample: Sendable {
    var time: ChartDate
    var interface: String
    var bitsPerSecond: Double?
}

enum SampleData {
    static let start = ChartDate(year: 2025, month: 3, day: 4)

    /// A day of traffic for some interfaces, every `step` seconds: a daily wave, noise and a few spikes.
    static func traffic(interfaces: [String], step: Double = 300, hours: Double = 24, seed: UInt64 = 7) -> [RateSample]
    {
        var generator = SeededGenerator(seed: seed)
        var samples: [RateSample] = []
        let count = Int(hours * 3600 / step)
        for (n, name) in interfaces.enumerated() {
            let scale = 40e6 * Double(n + 1)
            for i in 0..<count {
                let t = Double(i) * step
                let phase = t / 86_400 * 2 * Double.pi
                var value = scale * (1.2 + sinApprox(phase - 1.8 + Double(n) * 0.7)) + scale * 0.3 * generator.unit()
                if generator.unit() < 0.01 { value *= 2.5 }
                samples.append(RateSample(time: start.advanced(by: t), interface: name, bitsPerSecond: value))
            }
        }
        return samples
    }

    /// sin without Foundation, good to 1e-6, so data does not depend on the platform's libm.
    static func sinApprox(_ x: Double) -> Double {
        let twoPi = 2 * Double.pi
        var a = x.truncatingRemainder(dividingBy: twoPi)
        if a > Double.pi { a -= twoPi }
        if a < -Double.pi { a += twoPi }
        var term = a
        var sum = a
        for k in 1..<12 {
            term *= -a * a / Double((2 * k) * (2 * k + 1))
            sum += term
        }
        return sum
    }
}
