/// A calendar interval used for axis strides and for values that span a period (`.value("Day", date, unit: .day)`).
public enum CalendarUnit: Sendable, Hashable, CaseIterable {
    case second, minute, hour, day, weekOfYear, month, quarter, year

    /// The nominal length in seconds, used only to compare units and estimate tick counts.
    var approximateSeconds: Double {
        switch self {
        case .second: 1
        case .minute: 60
        case .hour: 3600
        case .day: 86_400
        case .weekOfYear: 604_800
        case .month: 2_629_746
        case .quarter: 7_889_238
        case .year: 31_556_952
        }
    }
}
