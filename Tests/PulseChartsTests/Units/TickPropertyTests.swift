import Testing

@testable import PulseCharts

/// Properties of scales and ticks over many generated domains, with a seeded generator so failures repeat.
@Suite struct TickPropertyTests {
    static func randomDomain(_ g: inout SeededGenerator) -> (Double, Double) {
        let magnitude = pow10(Int(g.next() % 19) - 6)
        let a = (g.unit() * 2 - 1) * magnitude * 10
        let width = magnitude * (0.01 + g.unit() * 20)
        return (a, a + width)
    }

    @Test func niceTicksAreMonotonicInsideAndEvenlySpaced() {
        var g = SeededGenerator(seed: 42)
        for _ in 0..<3000 {
            let (lower, upper) = TickPropertyTests.randomDomain(&g)
            let count = 2 + Int(g.next() % 10)
            let step = NiceTicks.step(lower: lower, upper: upper, count: count)
            let ticks = NiceTicks.ticks(lower: lower, upper: upper, step: step)
            #expect(!ticks.isEmpty || upper - lower < step)
            for (a, b) in zip(ticks, ticks.dropFirst()) {
                #expect(b > a)
                #expect(abs((b - a) - step) <= step * 1e-6)
            }
            let slack = step * 1e-6
            #expect(ticks.allSatisfy { $0 >= lower - slack && $0 <= upper + slack })
            #expect(ticks.count <= count * 3 + 1)
        }
    }

    @Test func niceDomainsContainTheData() {
        var g = SeededGenerator(seed: 7)
        for _ in 0..<3000 {
            let (lower, upper) = TickPropertyTests.randomDomain(&g)
            let (lo, hi) = NiceTicks.niceDomain(lower: lower, upper: upper, count: 5)
            #expect(lo <= lower && hi >= upper)
            #expect(hi - lo <= (upper - lower) * 4 + 1e-12 * max(abs(lo), abs(hi), 1))
        }
    }

    @Test func timeTicksAreAlignedMonotonicAndInside() {
        var g = SeededGenerator(seed: 9)
        let calendars = [
            ChartCalendar.utc, ChartCalendar(utcOffsetSeconds: 19_800, firstWeekday: .sunday),
            ChartCalendar(utcOffsetSeconds: -18_000),
        ]
        for i in 0..<600 {
            let start = 1.5e9 + g.unit() * 3e8
            let span = pow10(Int(g.next() % 8)) * (1 + g.unit() * 9)
            let calendar = calendars[i % calendars.count]
            let index = TimeTicks.strideIndex(span: span, count: 2 + Int(g.next() % 8))
            let stride = TimeTicks.strides[index]
            let ticks = TimeTicks.ticks(lower: start, upper: start + span, stride: stride, calendar: calendar)
            for (a, b) in zip(ticks, ticks.dropFirst()) { #expect(b > a) }
            #expect(ticks.allSatisfy { $0 >= start - 1e-6 && $0 <= start + span + 1e-6 })
            for tick in ticks {
                let c = calendar.components(of: ChartDate(secondsSinceEpoch: tick))
                switch stride.unit {
                case .minute: #expect(c.second == 0 && c.minute % stride.count == 0)
                case .hour: #expect(c.minute == 0 && c.hour % stride.count == 0)
                case .day: #expect(c.hour == 0 && c.minute == 0)
                case .weekOfYear: #expect(c.weekday == calendar.firstWeekday && c.hour == 0)
                case .month: #expect(c.day == 1 && (c.month - 1) % stride.count == 0)
                case .year: #expect(c.month == 1 && c.day == 1 && c.year % stride.count == 0)
                default: break
                }
            }
        }
    }

    /// Whatever the domain, size and axis, the labels an axis keeps never overlap and stay inside the frame.
    @Test func axisLabelsNeverOverlapOrLeaveTheFrame() {
        var g = SeededGenerator(seed: 1234)
        for i in 0..<400 {
            let isX = i % 2 == 0
            let length = 60 + g.unit() * 700
            let kind = i % 3
            var scale: PositionScale
            switch kind {
            case 0:
                let (lower, upper) = TickPropertyTests.randomDomain(&g)
                scale = PositionScale(kind: .linear, lower: lower, upper: upper, hasDomain: true)
            case 1:
                let start = 1.6e9 + g.unit() * 1e8
                scale = PositionScale(
                    kind: .time, lower: start, upper: start + pow10(Int(g.next() % 8)) * (1 + g.unit()),
                    hasDomain: true)
            default:
                let count = 1 + Int(g.next() % 60)
                scale = PositionScale(kind: .band, lower: 0, upper: Double(count), hasDomain: true)
                scale.categories = (0..<count).map { "category \($0 * 37 % 101)" }
                scale.bandOfTableIndex = Array(0..<count)
            }
            scale.rangeStart = isX ? 40 : 40 + length
            scale.rangeEnd = isX ? 40 + length : 40
            let frameMax = 40 + length + 30
            let planner = AxisPlanner(
                scale: scale, isX: isX, calendar: .utc, fontSize: 11, frameMin: 1,
                frameMax: frameMax)
            let formats: [AxisMarks] = [AxisMarks(), AxisMarks(format: .bitsPerSecond), AxisMarks(format: .bytes)]
            let plan = planner.plan(formats[i % 3], side: isX ? .bottom : .leading)
            let labelled = plan.marks.filter { $0.label != nil }
            #expect(!labelled.isEmpty, "no labels for \(scale.kind) \(scale.lower)...\(scale.upper) in \(length) px")
            #expect(
                AxisPlan.labelsFit(
                    pixels: plan.marks.map(\.pixel), labels: plan.marks.map(\.label), isX: isX,
                    fontSize: 11, frameMin: 1, frameMax: frameMax))
            for (a, b) in zip(plan.marks, plan.marks.dropFirst()) {
                #expect(isX ? b.pixel > a.pixel : b.pixel < a.pixel || scale.kind == .band)
            }
            let low = min(scale.rangeStart, scale.rangeEnd) - 0.01
            let high = max(scale.rangeStart, scale.rangeEnd) + 0.01
            #expect(plan.marks.allSatisfy { $0.pixel >= low && $0.pixel <= high })
            let labels = labelled.compactMap(\.label)
            // Numbers never repeat; a time axis may show 12:00 on two days, but never the same text side by side.
            if scale.kind == .linear {
                #expect(Set(labels).count == labels.count, "repeated labels \(labels)")
            } else {
                #expect(zip(labels, labels.dropFirst()).allSatisfy { $0 != $1 }, "repeated labels \(labels)")
            }
        }
    }

    @Test func logTicksArePowersInsideTheDomain() {
        var g = SeededGenerator(seed: 5)
        for _ in 0..<500 {
            let lower = pow10(Int(g.next() % 6)) * (1 + g.unit() * 8)
            let upper = lower * pow10(1 + Int(g.next() % 6))
            let ticks = NiceTicks.logTicks(lower: lower, upper: upper, maxCount: 6)
            #expect(!ticks.isEmpty)
            for (a, b) in zip(ticks, ticks.dropFirst()) { #expect(b > a) }
            #expect(ticks.allSatisfy { $0 >= lower * (1 - 1e-9) && $0 <= upper * (1 + 1e-9) })
        }
    }
}
