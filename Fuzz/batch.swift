// libFuzzer target: the payload of one BATCH frame, decoded on its own and then again against the coding references
// its first decoding left, so sections coded against a reference are reached too (scripts/fuzz.sh).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBatch(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let frame = [FrameType.batch.rawValue] + Array(UnsafeBufferPointer(start: data, count: size))
    var references: ReferenceTable? = ReferenceTable()
    for _ in 0..<2 {
        guard case .batch(let batch)? = try? WireCodec.decode(frame, limits: .standard, references: &references) else {
            return 0
        }
        // A decoded batch holds what its limits allow, whatever the frame claimed.
        let samples = batch.sections.reduce(0) { $0 + $1.ticks.count }
        guard samples <= WireLimits.standard.maximumSamplesPerBatch,
            batch.timestamps.count <= WireLimits.standard.maximumTicksPerBatch
        else { fatalError("a batch beyond its limits was decoded") }
    }
    return 0
}
