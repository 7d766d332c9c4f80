/// The rules a decoded batch must keep beyond its encoding before the daemon journals, acknowledges or stores it
/// (`docs/protocol.md`, "Batches"): bounds that keep every figure computed from it representable.
///
/// The daemon checks them on the connection's event loop, so a batch that breaks one is refused by name (`REJECT`)
/// before it is journaled; the store checks them again before it applies a batch, so a journal written by an older
/// daemon cannot bring one past them.
public enum BatchRules {
    /// 9999-12-31T23:59:59.999Z, the latest timestamp a batch may carry: RFC 3339 writes four-digit years, and any
    /// difference of two timestamps fits in 49 bits, so no product of times in counting and spreading can overflow.
    public static let latestTimestamp: Int64 = 253_402_300_799_999
    /// The highest order a batch may have: orders are stored as signed 64-bit integers.
    public static let maximumOrder: UInt64 = UInt64(Int64.max) - 1
    /// The most batches an agent may report dropped before one batch (a spool cannot have dropped more), so the
    /// store's count of a stream's drops cannot overflow.
    public static let maximumDroppedBefore: UInt64 = 1 << 40

    /// Why `batch` breaks a rule, or nil when it keeps them all.
    public static func violation(_ batch: WireBatch) -> String? {
        violation(
            sequence: batch.sequence, order: batch.order, droppedBefore: batch.droppedBefore,
            lastTimestamp: batch.timestamps.last ?? 0)
    }

    /// The same from a batch's header and last timestamp (timestamps are strictly increasing, so the last is the
    /// latest).
    public static func violation(sequence: UInt64, order: UInt64, droppedBefore: UInt64, lastTimestamp: Int64)
        -> String?
    {
        if order > maximumOrder {
            return "batch \(sequence) has order \(order), above 2⁶³ − 2"
        }
        if lastTimestamp > latestTimestamp {
            return
                "batch \(sequence) has a timestamp of \(lastTimestamp) ms, after 9999-12-31T23:59:59.999Z (the latest a batch may carry)"
        }
        if lastTimestamp < 0 {
            return "batch \(sequence) has a timestamp before 1970"
        }
        if droppedBefore > maximumDroppedBefore {
            return "batch \(sequence) reports \(droppedBefore) batches dropped before it, more than 2⁴⁰"
        }
        return nil
    }
}
