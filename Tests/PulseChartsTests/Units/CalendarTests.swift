import Testing

@testable import PulseCharts

@Suite struct CalendarTests {
    @Test func knownDates() {
        #expect(ChartDate(year: 1970, month: 1, day: 1).secondsSinceEpoch == 0)
        #expect(ChartDate(year: 2000, month: 3, day: 1).secondsSinceEpoch == 951_868_800)
        #expect(ChartDate(year: 2024, month: 2, day: 29, hour: 12).secondsSinceEpoch == 1_709_208_000)
        #expect(ChartDate(year: 1969, month: 12, day: 31, hour: 23, minute: 59, second: 59).secondsSinceEpoch == -1)
        // Months past December roll into the next year.
        #expect(ChartDate(year: 2024, month: 13, day: 1) == ChartDate(year: 2025, month: 1, day: 1))
        #expect(ChartDate(year: 2025, month: 1, day: 1, utcOffset: 3600).secondsSinceEpoch == 1_735_686_000)
    }

    @Test func civilRoundTripOverFourCenturies() {
        var generator = SeededGenerator(seed: 3)
        for _ in 0..<5000 {
            let days = Int(generator.next() % 292_194) - 146_097
            let civil = CivilDate(days: days)
            #expect(CivilDate.daysFromCivil(year: civil.year, month: civil.month, day: civil.day) == days)
            #expect((1...12).contains(civil.month) && (1...31).contains(civil.day))
        }
    }

    @Test func weekdaysAndWeekStarts() {
        let utc = ChartCalendar.utc
        // 2025-03-05 was a Wednesday.
        let wednesday = ChartDate(year: 2025, month: 3, day: 5, hour: 10)
        #expect(utc.components(of: wednesday).weekday == .wednesday)
        #expect(utc.startOf(.weekOfYear, containing: wednesday) == ChartDate(year: 2025, month: 3, day: 3))
        let us = ChartCalendar(firstWeekday: .sunday)
        #expect(us.startOf(.weekOfYear, containing: wednesday) == ChartDate(year: 2025, month: 3, day: 2))
        #expect(Weekday(foundationWeekday: 1) == .sunday)
        #expect(Weekday(foundationWeekday: 2) == .monday)
        #expect(Weekday(foundationWeekday: 8) == nil)
        #expect(
            Weekday.ordered(startingAt: .sunday).map(\.shortName) == ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"])
    }

    @Test func offsetsShiftWallClock() {
        let berlin = ChartCalendar(utcOffsetSeconds: 3600)
        let instant = ChartDate(year: 2025, month: 3, day: 4, hour: 23, minute: 30)
        let c = berlin.components(of: instant)
        #expect(c.day == 5 && c.hour == 0 && c.minute == 30)
        #expect(berlin.startOf(.day, containing: instant) == ChartDate(year: 2025, month: 3, day: 5, utcOffset: 3600))
        #expect(DateFormat.iso.format(instant, calendar: berlin) == "2025-03-05 00:30")
    }

    @Test func dateFormats() {
        let date = ChartDate(year: 2025, month: 3, day: 5, hour: 14, minute: 5, second: 9)
        #expect(DateFormat.hourMinute.format(date) == "14:05")
        #expect(DateFormat.hourMinuteSecond.format(date) == "14:05:09")
        #expect(DateFormat.monthDay.format(date) == "Mar 5")
        #expect(DateFormat("EEE dd.MM.yy 'at' HH'h'").format(date) == "Wed 05.03.25 at 14h")
        var french = ChartCalendar.utc
        french.monthSymbols = [
            "janv.", "févr.", "mars", "avr.", "mai", "juin", "juil.", "août", "sept.", "oct.", "nov.", "déc.",
        ]
        #expect(DateFormat("d MMM").format(date, calendar: french) == "5 mars")
    }
}
