/// How instants are written on time axes and in labels, as a small locale-free pattern.
///
/// Patterns use `yyyy` (year), `MM` (month number), `MMM` (month name), `d`/`dd` (day), `EEE` (weekday name),
/// `HH` (hour 00-23), `mm` (minute), `ss` (second); other characters are copied, and text in single quotes is
/// copied literally. Names come from the chart's `ChartCalendar`.
public struct DateFormat: Sendable, Hashable {
    /// The pattern, such as `"MMM d HH:mm"`.
    public var pattern: String

    /// Creates a format from a pattern.
    public init(_ pattern: String) {
        self.pattern = pattern
    }

    /// `14:05`
    public static let hourMinute = DateFormat("HH:mm")
    /// `14:05:09`
    public static let hourMinuteSecond = DateFormat("HH:mm:ss")
    /// `Mar 5`
    public static let monthDay = DateFormat("MMM d")
    /// `Tue`
    public static let weekday = DateFormat("EEE")
    /// `Mar`
    public static let month = DateFormat("MMM")
    /// `2025`
    public static let year = DateFormat("yyyy")
    /// `2025-03-05 14:05`, used in descriptions and tooltips.
    public static let iso = DateFormat("yyyy-MM-dd HH:mm")
    /// `2025-03-05 14:05:09`
    public static let isoSeconds = DateFormat("yyyy-MM-dd HH:mm:ss")

    /// Writes `date` as read on `calendar`.
    public func format(_ date: ChartDate, calendar: ChartCalendar = .utc) -> String {
        let c = calendar.components(of: date)
        var out = ""
        let chars = Array(pattern)
        var i = 0
        while i < chars.count {
            let ch = chars[i]
            if ch == "'" {
                i += 1
                while i < chars.count && chars[i] != "'" {
                    out.append(chars[i])
                    i += 1
                }
                i += 1
                continue
            }
            var run = 1
            while i + run < chars.count && chars[i + run] == ch { run += 1 }
            switch ch {
            case "y": out += run == 2 ? DateFormat.pad(c.year % 100, 2) : String(c.year)
            case "M":
                out += run >= 3 ? calendar.monthSymbols[(c.month - 1) % 12] : DateFormat.pad(c.month, run)
            case "d": out += DateFormat.pad(c.day, run)
            case "E": out += calendar.weekdaySymbols[c.weekday.rawValue - 1]
            case "H": out += DateFormat.pad(c.hour, run)
            case "m": out += DateFormat.pad(c.minute, run)
            case "s": out += DateFormat.pad(Int(c.second.rounded(.down)), run)
            default: out += String(repeating: ch, count: run)
            }
            i += run
        }
        return out
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
