// libFuzzer target: a byte stream as an agent would send it, split into frames and decoded in order with one
// connection's coding references, as the daemon's state machine does (scripts/fuzz.sh builds and runs it).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrames(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // A stream cut short keeps the frames before the cut.
    guard let frames = try? WireCodec.frames(in: bytes) else { return 0 }
    var references: ReferenceTable? = ReferenceTable()
    for frame in frames {
        _ = WireCodec.batchName(frame)
        if let message = try? WireCodec.decode(frame, limits: .standard, references: &references) {
            // What decodes must encode again, and decode to the same message.
            let again = WireCodec.encode(message)
            guard let decoded = try? WireCodec.decode(Array(again.dropFirst(4))), decoded == message else {
                fatalError("re-encoding \(message) did not decode to the same message")
            }
        }
    }
    return 0
}
