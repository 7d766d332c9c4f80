import PulseCore

/// The second stage of a batch through ``StoreWriter``, once its agent is known: whether it was stored before. An
/// agent numbers the batches of each stream (one per run of the agent); the sequence numbers a stream has stored are
/// kept as ranges, merged as the holes between them fill. The ranges of the streams this writer has seen are cached
/// here.
struct Deduplicator {
    struct StreamKey: Hashable {
        var agent: Int64
        var stream: UInt64
    }

    /// The most separate ranges one stream may hold (`[limits] sequence_ranges_per_stream`).
    let maximumRanges: Int
    var streams: [StreamKey: Int64] = [:]
    var ranges: [Int64: [ClosedRange<UInt64>]] = [:]
    /// Ranges held in ``ranges``, about (bounds the cache, with ``streams``).
    var cachedRanges = 0

    init(maximumRanges: Int) {
        self.maximumRanges = maximumRanges
    }

    /// Forgets every cached stream and range (another writer may have changed them).
    mutating func forget() {
        ranges.removeAll()
        cachedRanges = 0
        streams.removeAll()
    }

    /// Takes the ranges another writer changed, for the streams this one holds.
    mutating func apply(_ changed: [Int64: [ClosedRange<UInt64>]]) {
        for (stream, list) in changed where ranges[stream] != nil { ranges[stream] = list }
    }

    /// Whether this is the first delivery of batch `sequence` of the agent's `stream`; if so it is recorded (and the
    /// `droppedBefore` batches the agent's spool dropped are counted).
    ///
    /// - Throws: ``StoreError/invalidBatch(_:)`` when the batch would open more separate ranges than the stream may
    ///   have, and what the transaction throws.
    mutating func recordFirstDelivery(
        agent: Int64, stream streamNumber: UInt64, sequence: UInt64, droppedBefore: UInt64,
        in db: some IngestTransaction
    ) async throws -> Bool {
        let key = StreamKey(agent: agent, stream: streamNumber)
        let stream: Int64
        if let known = streams[key] {
            stream = known
        } else {
            // Agents restart (a stream each run) and come and go: the caches stay bounded; a miss costs a lookup.
            if streams.count >= 100_000 || cachedRanges >= 1_000_000 {
                streams.removeAll(keepingCapacity: true)
                ranges.removeAll(keepingCapacity: true)
                cachedRanges = 0
            }
            stream = try await db.streamID(agent: agent, stream: streamNumber)
            streams[key] = stream
            ranges[stream] = try await db.ranges(stream: stream)
            cachedRanges += ranges[stream]?.count ?? 0
        }
        var known = ranges[stream] ?? []
        // The range that starts after the sequence; the one before it may hold or end just before it.
        let after = known.firstIndex { $0.lowerBound > sequence } ?? known.count
        if after > 0, known[after - 1].contains(sequence) { return false }
        let joinsBefore = after > 0 && known[after - 1].upperBound &+ 1 == sequence
        let joinsAfter = after < known.count && known[after].lowerBound == sequence &+ 1
        switch (joinsBefore, joinsAfter) {
        case (true, true):
            let merged = known[after - 1].lowerBound...known[after].upperBound
            try await db.deleteRange(stream: stream, first: known[after].lowerBound)
            try await db.updateRange(stream: stream, first: merged.lowerBound, to: merged)
            known[after - 1] = merged
            known.remove(at: after)
        case (true, false):
            known[after - 1] = known[after - 1].lowerBound...sequence
            try await db.updateRange(stream: stream, first: known[after - 1].lowerBound, to: known[after - 1])
        case (false, true):
            try await db.updateRange(stream: stream, first: known[after].lowerBound, to: sequence...known[after].upperBound)
            known[after] = sequence...known[after].upperBound
        case (false, false):
            guard known.count < maximumRanges else {
                throw StoreError.invalidBatch(
                    "batch \(sequence) would be stream \(Hex.string(streamNumber, width: 16))'s \(known.count + 1)th separate range of sequence numbers, more than [limits] sequence_ranges_per_stream (\(maximumRanges))"
                )
            }
            try await db.insertRange(stream: stream, sequence...sequence)
            known.insert(sequence...sequence, at: after)
            cachedRanges += 1
        }
        ranges[stream] = known
        if droppedBefore > 0 {
            try await db.addDropped(stream: stream, Int64(clamping: droppedBefore))
        }
        return true
    }
}
