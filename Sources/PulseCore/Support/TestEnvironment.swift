#if DEBUG
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    /// What a debug build's tests ask of a process through its environment: a stepping wall clock and fault points.
    /// Only the executables' entry points read it, once, and hand the values on; release builds have no such switch
    /// (``ProcessSeams`` gives their entry points ``WallClock/system`` and ``FaultPoints/none``).
    public enum TestEnvironment {
        /// ``WallClock/stepped(byOffsetIn:)`` on the file `NETPULSE_TEST_CLOCK_OFFSET_FILE` names, or the system clock.
        public static func clock() -> WallClock {
            guard let path = getenv("NETPULSE_TEST_CLOCK_OFFSET_FILE") else { return .system }
            return .stepped(byOffsetIn: String(cString: path))
        }

        /// The fault `NETPULSE_TEST_FAULT` names (``FaultPoints``), or none.
        public static func faults() -> FaultPoints {
            guard let text = getenv("NETPULSE_TEST_FAULT") else { return .none }
            return FaultPoints(String(cString: text))
        }
    }
#endif

/// The clock and fault points an executable's entry point reads once and hands to its services: the system clock
/// and no faults, except in a debug build whose tests ask for others through ``TestEnvironment``. One place decides,
/// so the agent and the daemon cannot differ in what a release build ignores.
public enum ProcessSeams {
    public static func read() -> (clock: WallClock, faults: FaultPoints) {
        #if DEBUG
            (TestEnvironment.clock(), TestEnvironment.faults())
        #else
            (WallClock.system, FaultPoints.none)
        #endif
    }
}
