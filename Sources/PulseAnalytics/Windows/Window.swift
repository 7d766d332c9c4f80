import PulseCore

/// A half-open span of time `[from, to)` in milliseconds since the Unix epoch, with a name for people.
public struct Window: Sendable, Hashable {
    public var from: Int64
    public var to: Int64
    public var name: String

    public init(from: Int64, to: Int64, name: String = "") {
        self.from = from
        self.to = to
        self.name = name
    }

    public var length: Int64 { to - from }

    /// The part of the window that has happened by `now`, in ms (0 for a window in the future).
    public func elapsed(now: Int64) -> Int64 { max(0, min(to, now) - from) }
}

/// A window by description, resolved against a time: what configs and the CLI name (`last-1h`, `today` …).
public enum WindowSpec: Sendable, Hashable, CustomStringConvertible {
    /// The `length` up to now, the current (partial) bucket included: `[end − length, end)` with `end` the end of
    /// the bucket holding now, both ends on a level's boundaries.
    case last(Int64)
    /// The local day, ISO week, month or year holding now (`offset` 0) or before it (−1 …).
    case calendar(CivilCalendar.Unit, offset: Int)
    /// The billing period holding now (`offset` 0) or before it (−1).
    case billingPeriod(offset: Int)
    case fixed(from: Int64, to: Int64)

    /// `last-1h`, `last-30d`, `today`, `yesterday`, `this-week`, `last-week`, `this-month`, `last-month`,
    /// `this-year`, `billing-period`, `last-billing-period`.
    public init?(parsing text: String) {
        switch text {
        case "today": self = .calendar(.day, offset: 0)
        case "yesterday": self = .calendar(.day, offset: -1)
        case "this-week": self = .calendar(.week, offset: 0)
        case "last-week": self = .calendar(.week, offset: -1)
        case "this-month": self = .calendar(.month, offset: 0)
        case "last-month": self = .calendar(.month, offset: -1)
        case "this-year": self = .calendar(.year, offset: 0)
        case "billing-period": self = .billingPeriod(offset: 0)
        case "last-billing-period": self = .billingPeriod(offset: -1)
        default:
            guard text.hasPrefix("last-"), let length = Units.parseDuration(String(text.dropFirst(5))), length > 0
            else { return nil }
            self = .last(length)
        }
    }

    public var description: String {
        switch self {
        case .last(let length): "last-\(Units.formatDuration(length))"
        case .calendar(.day, 0): "today"
        case .calendar(.day, _): "yesterday"
        case .calendar(let unit, let offset): "\(offset == 0 ? "this" : "last")-\(unit.rawValue)"
        case .billingPeriod(let offset): offset == 0 ? "billing-period" : "last-billing-period"
        case .fixed(let from, let to): "\(RFC3339.text(from))/\(RFC3339.text(to))"
        }
    }

    /// The window at `now`; `alignment` rounds the ends of `last` windows, `billingDay` places billing periods.
    public func resolve(now: Int64, calendar: CivilCalendar, alignment: RollupLevel, billingDay: Int = 1) -> Window {
        switch self {
        case .last(let length):
            let to = alignment.bucketStart(now) + alignment.width
            return Window(from: alignment.bucketStart(to - length), to: to, name: description)
        case .calendar(let unit, let offset):
            var span = calendar.span(of: unit, containing: now)
            for _ in 0..<(-offset) { span = calendar.span(of: unit, containing: span.from - 1) }
            return Window(from: span.from, to: span.to, name: description)
        case .billingPeriod(let offset):
            var span = calendar.billingPeriod(day: billingDay, containing: now)
            for _ in 0..<(-offset) { span = calendar.billingPeriod(day: billingDay, containing: span.from - 1) }
            return Window(from: span.from, to: span.to, name: description)
        case .fixed(let from, let to):
            return Window(from: from, to: to, name: description)
        }
    }
}

/// A rollup level and how long it is kept: what a window can be read at.
public struct RetainedLevel: Sendable, Hashable {
    public var level: RollupLevel
    /// Milliseconds kept; nil for ever.
    public var keep: Int64?

    public init(level: RollupLevel, keep: Int64?) {
        self.level = level
        self.keep = keep
    }
}

/// Chooses the level a window is read at (`docs/windows.md`, "Windows").
public enum Resolution {
    /// Levels whose width divides both ends of the window and that are retained for all of it at `now`.
    public static func candidates(for window: Window, now: Int64, levels: [RetainedLevel]) -> [RollupLevel] {
        levels.filter { retained in
            retained.level.aligns(window.from) && retained.level.aligns(window.to)
                && (retained.keep.map { window.from >= now - $0 } ?? true)
        }.map(\.level).sorted()
    }

    /// The finest candidate giving at most 10,080 buckets (a week of minutes), else the coarsest candidate; or
    /// `preferred` when it is a candidate.
    public static func choose(
        for window: Window, now: Int64, levels: [RetainedLevel], preferred: RollupLevel? = nil
    ) -> RollupLevel? {
        let candidates = candidates(for: window, now: now, levels: levels)
        if let preferred, candidates.contains(preferred) { return preferred }
        return candidates.first { window.length / $0.width <= 10_080 } ?? candidates.last
    }

    /// Splits a window into pieces each read at the coarsest candidate level that fits, for sums: the middle at
    /// coarse levels, the edges at fine ones. Sums are exact at every level, so the pieces add up exactly.
    public static func pieces(of window: Window, now: Int64, levels: [RetainedLevel]) -> [(RollupLevel, Window)]? {
        let usable = levels.filter { $0.keep.map { window.from >= now - $0 } ?? true }.map(\.level).sorted()
        guard let finest = usable.first, finest.aligns(window.from), finest.aligns(window.to) else { return nil }
        var pieces = [(RollupLevel, Window)]()
        func cover(_ from: Int64, _ to: Int64, _ index: Int) {
            guard from < to else { return }
            let level = usable[index]
            if index == 0 {
                pieces.append((level, Window(from: from, to: to)))
                return
            }
            let innerFrom = (from + level.width - 1) / level.width * level.width
            let innerTo = to / level.width * level.width
            guard innerFrom < innerTo else { return cover(from, to, index - 1) }
            cover(from, innerFrom, index - 1)
            pieces.append((level, Window(from: innerFrom, to: innerTo)))
            cover(innerTo, to, index - 1)
        }
        cover(window.from, window.to, usable.count - 1)
        return pieces
    }
}
