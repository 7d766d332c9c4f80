/// What a process opening a store may do with it, for either store (``SQLiteStore``, ``PostgresStore``).
public enum StoreAccess: Sendable {
    /// The daemon: creates the store or brings an older one up to date, and writes everything.
    case owner
    /// Tools that only query: the store must exist and be up to date; nothing is written.
    case reader
    /// `netpulse alerts silence` and `expire`: short writes of operator state (silences) beside the running
    /// daemon (WAL lets the two write in turn), into a store that must exist and be up to date — an operator's
    /// command never creates or migrates the daemon's store.
    case editor
}
