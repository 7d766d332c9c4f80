import PulseCore

/// Gives each batch its `order`: strictly increasing for this agent across restarts, even when the wall clock
/// steps back or the state directory is new (`docs/protocol.md`, "Order").
///
/// An order is `max(previous + 1, wall clock ms)` (a hybrid logical clock): it follows the wall clock when the clock
/// behaves, and keeps increasing when it does not. A restart must not reuse an order, so the clock reserves an hour
/// ahead in a small file (`state_directory/order`, written atomically) and starts after the reservation: one fsync an
/// hour, not one per batch. A new state directory starts from the wall clock, which is after any order an earlier
/// installation used as long as the clock was right then.
public struct OrderClock: Sendable {
    public let path: String
    private var last: UInt64
    private var reserved: UInt64

    /// How far ahead orders are reserved on disk (ms of order).
    static let reservation: UInt64 = 3_600_000

    /// Opens (or starts) the clock kept at `path`.
    ///
    /// - Throws: when the file exists but cannot be read or holds no number.
    public init(path: String) throws(FileIO.Failure) {
        self.path = path
        if FileIO.exists(path) {
            let text = try FileIO.readString(path).trimmingWhitespace()
            guard let value = UInt64(text) else {
                throw FileIO.Failure(operation: "parse order", path: path, errno: 22)
            }
            reserved = value
        } else {
            reserved = 0
        }
        last = reserved
    }

    /// Writes a reservation an hour ahead of the next order now, so ``next(now:)`` need not write for half an hour.
    public mutating func reserve(now: Int64) throws(FileIO.Failure) {
        let ahead = Renewal(path: path, value: max(last + 1, UInt64(clamping: now)) + Self.reservation)
        try ahead.perform()
        reserved = ahead.value
    }

    /// The reservation to write next (off the sampling path, by ``OrderClock/Renewal/perform()``), once less than
    /// half of the current one is left; nil before.
    public var renewalDue: Renewal? {
        reserved - min(reserved, last) < Self.reservation / 2
            ? Renewal(path: path, value: last + Self.reservation) : nil
    }

    /// A reservation to write (every write of the order file goes through here); ``renewed(_:)`` takes one written
    /// off the caller's path.
    public struct Renewal: Sendable {
        public let path: String
        public let value: UInt64

        public func perform() throws(FileIO.Failure) {
            try FileIO.writeAtomically(path, Array("\(value)\n".utf8), mode: 0o640)
        }
    }

    /// The reservation held now, as a renewal to write again, when it is larger than `written` (``next(now:)`` wrote
    /// it while `written` was waiting for the disk); nil otherwise.
    public func rewriteIfBeyond(_ written: Renewal) -> Renewal? {
        reserved > written.value ? Renewal(path: path, value: reserved) : nil
    }

    /// A renewal written by ``Renewal/perform()``: orders up to it need no write.
    public mutating func renewed(_ renewal: Renewal) {
        reserved = max(reserved, renewal.value)
    }

    /// The next order; writes a new reservation when this one passes the current one (which renewals written in
    /// time avoid: this write is on the caller's path).
    ///
    /// - Parameter now: the wall clock, milliseconds since the Unix epoch.
    public mutating func next(now: Int64) throws(FileIO.Failure) -> UInt64 {
        let value = max(last + 1, UInt64(clamping: now))
        if value >= reserved {
            let ahead = Renewal(path: path, value: value + Self.reservation)
            try ahead.perform()
            reserved = ahead.value
        }
        last = value
        return value
    }
}
