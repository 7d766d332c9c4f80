import PulseAnalytics

/// One chart of a dashboard. Rates are drawn in bits per second; missing buckets are gaps, never zeros.
public struct PanelSpec: Sendable, Hashable {
    /// What a panel draws.
    public enum Kind: Sendable, Hashable {
        /// The scope's traffic: download (received) up, upload (sent) mirrored down.
        case throughput
        /// The scope's hosts (`.host`), groups (`.group`) or counted interfaces (`.interface`) ranked by bytes in
        /// the window, as horizontal bars of received and sent bytes.
        case topTalkers(SeriesKind)
        /// The traffic of each group of one label key (`site`) as stacked areas, received up and sent down.
        case trafficByGroup(key: String)
        /// The traffic of each counted interface of the scope as stacked areas, received up and sent down.
        case trafficByInterface
        /// Receive and transmit errors and drops, packets per second.
        case errorsAndDrops
        /// The busiest interfaces' utilisation (the larger direction over the link speed), interfaces of unknown
        /// speed left out.
        case utilisation
        /// The scope's mean rate by weekday and hour of day, over the window or the last 7 days if that is longer.
        case weekdayHourHeatmap
        /// The scope's 5-minute rates in the billing period so far, with the bill's 95th percentile as a rule.
        case billingPercentile
        /// The 95th-percentile bills of the scope's hosts (`.host`) or groups (`.group`) for the billing period
        /// holding now.
        case bills(SeriesKind)
    }

    /// What it draws.
    public var kind: Kind
    /// The panel's title; nil: one that says what it shows.
    public var title: String?
    /// The most series (or bars) drawn; the rest are summed into one "other".
    public var limit: Int

    /// A panel; `limit` is at least 1.
    public init(_ kind: Kind, title: String? = nil, limit: Int = 8) {
        self.kind = kind
        self.title = title
        self.limit = max(1, limit)
    }
}
