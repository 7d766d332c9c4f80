import PulseCore
import Testing

@testable import PulseDaemon

/// The kernel's CPU pressure, which tells drawing to rest.
@Suite struct CPUPressureTests {
    @Test func readsTheSomeLinesTotal() {
        let text = """
            some avg10=1.50 avg60=0.10 avg300=1.95 total=8168184097
            full avg10=0.00 avg60=0.00 avg300=0.00 total=0

            """
        #expect(CPUPressure.stalledMicroseconds(in: text) == 8_168_184_097)
        #expect(CPUPressure.stalledMicroseconds(in: "full avg10=0.00 total=12\n") == nil)
        #expect(CPUPressure.stalledMicroseconds(in: "some avg10=0.00 total=x\n") == nil)
        #expect(CPUPressure.stalledMicroseconds(path: "/nonexistent/pressure") == nil)
    }

    /// Where the kernel keeps pressure figures (Debian 12's does, unless booted with `psi=0`), the total is read
    /// and never goes back.
    @Test(.enabled(if: (try? FileIO.readString(CPUPressure.path)) != nil)) func theKernelsTotalOnlyGrows() throws {
        let first = try #require(CPUPressure.stalledMicroseconds())
        let second = try #require(CPUPressure.stalledMicroseconds())
        #expect(second >= first)
    }
}
