import PulseAnalytics
import PulseStore

extension DashboardSpec {
    /// The dashboards drawn when none are declared: a fleet overview, then one page per host (by agent name).
    ///
    /// - Parameter groupBy: label keys worth a traffic-per-group panel, first choice first (the billing
    ///   `group_by`); without one that the store has groups of, the smallest key it has is used.
    public static func defaults(for catalogue: Catalogue, groupBy: [String] = []) -> [DashboardSpec] {
        let keys = Set(catalogue.groups.compactMap { $0.group?.key })
        let key = groupBy.first(where: keys.contains) ?? keys.min()
        let hosts = catalogue.hosts.compactMap(\.agent).sorted()
        return [fleetOverview(groupKey: key)] + hosts.map(hostPage)
    }

    /// Throughput, top hosts, traffic per group of `groupKey` (when given), errors and drops, the busiest
    /// interfaces, busy hours, the fleet's 95th percentile and the hosts' bills.
    public static func fleetOverview(groupKey: String?) -> DashboardSpec {
        var panels: [PanelSpec] = [PanelSpec(.throughput), PanelSpec(.topTalkers(.host), limit: 10)]
        if let groupKey { panels.append(PanelSpec(.trafficByGroup(key: groupKey), limit: 6)) }
        panels += [
            PanelSpec(.errorsAndDrops), PanelSpec(.utilisation, limit: 6), PanelSpec(.weekdayHourHeatmap),
            PanelSpec(.billingPercentile), PanelSpec(.bills(.host), limit: 10),
        ]
        return DashboardSpec(
            name: "fleet", title: "Fleet overview",
            description:
                "Traffic of the whole fleet: throughput, the hosts that moved the most bytes"
                + (groupKey.map { ", traffic per \($0)" } ?? "")
                + ", errors and drops, the busiest interfaces, busy hours and 95th-percentile billing.",
            scope: .fleet, panels: panels)
    }

    /// One host: throughput, its interfaces' traffic, errors and drops, utilisation, and its 95th percentile with
    /// the billing line.
    public static func hostPage(_ agent: String) -> DashboardSpec {
        DashboardSpec(
            name: "host-\(agent)", title: "Host \(agent)",
            description:
                "Traffic of host \(agent): throughput, each counted interface's traffic, errors and drops, "
                + "utilisation of its interfaces and its 95th percentile in the billing period so far.",
            scope: .host(agent),
            panels: [
                PanelSpec(.throughput), PanelSpec(.trafficByInterface, limit: 6), PanelSpec(.errorsAndDrops),
                PanelSpec(.utilisation, limit: 6), PanelSpec(.billingPercentile),
            ])
    }
}
