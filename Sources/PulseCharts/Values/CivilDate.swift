/// Proleptic Gregorian calendar arithmetic on day numbers (days since 1970-01-01).
///
/// These are Howard Hinnant's days-from-civil algorithms: exact for every year, no tables, no locale.
struct CivilDate: Hashable, Sendable {
    var year: Int
    var month: Int
    var day: Int

    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        // Normalise months outside 1...12 so callers can step by months without caring about year ends.
        let monthIndex = month - 1
        let y0 = year + floorDiv(monthIndex, 12)
        let m = floorMod(monthIndex, 12) + 1
        let y = m <= 2 ? y0 - 1 : y0
        let era = floorDiv(y, 400)
        let yearOfEra = y - era * 400
        let shiftedMonth = m > 2 ? m - 3 : m + 9
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    init(days: Int) {
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let d = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let m = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        self.year = yearOfEra + era * 400 + (m <= 2 ? 1 : 0)
        self.month = m
        self.day = d
    }

    var days: Int { CivilDate.daysFromCivil(year: year, month: month, day: day) }

    /// ISO weekday of a day number: 1 = Monday ... 7 = Sunday. 1970-01-01 was a Thursday.
    static func isoWeekday(days: Int) -> Int {
        floorMod(days + 3, 7) + 1
    }
}

@inline(__always)
func floorDiv(_ a: Int, _ b: Int) -> Int {
    let q = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
}

@inline(__always)
func floorMod(_ a: Int, _ b: Int) -> Int {
    let r = a % b
    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r
}
