#if DEBUG
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    /// What a debug build's tests ask of a process through its environment: a stepping wall clock and fault points.
    /// Only the executables' entry points read it, once, and hand the values on; release builds have no such switch
    /// (their entry points use ``WallClock/system`` and ``FaultPoints/none``).
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
