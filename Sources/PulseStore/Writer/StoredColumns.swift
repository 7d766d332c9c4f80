import PulseAnalytics
import PulseCore

/// The 16 bytes of a boot id, as stored.
package enum BootIDBytes {
    package static func bytes(_ bootID: BootID) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: bootID.high >> UInt64(56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: bootID.low >> UInt64(56 - 8 * $0)) }
    }

    package static func bootID(_ bytes: [UInt8]) -> BootID {
        guard bytes.count == 16 else { return BootID(high: 0, low: 0) }
        return BootID(
            high: bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }, low: bytes[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
        )
    }
}

/// Link facts as six integer columns: speed_mbps, operstate, carrier (2 when unknown), mtu, link_kind, relation.
package enum LinkColumns {
    package static func values(_ state: LinkState) -> [Int64] {
        let carrier: Int64 = state.carrier.map { $0 ? 1 : 0 } ?? 2
        return [
            Int64(state.speedMbps ?? 0), Int64(state.operState.rawValue), carrier, Int64(state.mtu),
            Int64(state.kind.rawValue), Int64(state.relation.rawValue),
        ]
    }
}

extension StoreWriter {
    /// Link facts from their six columns (speed_mbps, operstate, carrier, mtu, link_kind, relation).
    package static func linkState(_ columns: [Int64]) -> LinkState {
        LinkState(
            speedMbps: columns[0] > 0 ? UInt32(truncatingIfNeeded: columns[0]) : nil,
            operState: OperState(rawValue: UInt8(truncatingIfNeeded: columns[1])) ?? .unknown,
            carrier: columns[2] == 2 ? nil : columns[2] == 1, mtu: UInt32(truncatingIfNeeded: columns[3]),
            kind: InterfaceKind(rawValue: UInt8(truncatingIfNeeded: columns[4])) ?? .unknown,
            relation: InterfaceRelation(rawValue: UInt8(truncatingIfNeeded: columns[5])))
    }

    /// Fills `arguments` for one row of a rollup table: series, start, then `BucketColumns.all` in order.
    package static func bucketArguments(
        _ values: BucketValues, series: Int64, start: Int64, revision: Int64, into arguments: inout [Int64]
    ) {
        arguments[0] = series
        arguments[1] = start
        for lane in 0..<8 { arguments[2 + lane] = values.traffic[lane] }
        arguments[10] = values.measuredMilliseconds
        arguments[11] = values.interpolatedMilliseconds
        arguments[12] = Int64(clamping: values.peakRx)
        arguments[13] = Int64(clamping: values.peakTx)
        arguments[14] = Int64(values.speedMbps)
        for lane in 0..<StepEvents.columns.count { arguments[15 + lane] = values.events[lane] }
        arguments[15 + StepEvents.columns.count] = values.flaggedMilliseconds
        arguments[16 + StepEvents.columns.count] = values.memberMilliseconds
        arguments[17 + StepEvents.columns.count] = values.capacity
        arguments[18 + StepEvents.columns.count] = revision
    }
}
