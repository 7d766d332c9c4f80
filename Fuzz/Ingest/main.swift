import PulseCore

#if canImport(Glibc)
    import Glibc
#endif

/// The stateful fuzz target (``IngestProgram``), in libFuzzer's form: built with `--sanitize=fuzzer` and
/// `-DNETPULSE_LIBFUZZER` it runs under libFuzzer's own driver (`scripts/fuzz.sh --libfuzzer`); otherwise the
/// mutation driver below runs it (`scripts/fuzz.sh`, which `scripts/test.sh` runs).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIngest(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    var program = IngestProgram(Array(UnsafeBufferPointer(start: data, count: count)))
    do {
        try program.run()
    } catch {
        fatalError("the program could not run: \(error)")
    }
    return 0
}

#if !NETPULSE_LIBFUZZER
    exit(FuzzDriver.main(Array(CommandLine.arguments.dropFirst())))
#endif
