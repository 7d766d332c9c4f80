import PulseAnalytics

/// A dashboard: a named page of panels about one scope, rendered for each ``DashboardRange``.
public struct DashboardSpec: Sendable, Hashable {
    /// The name it is declared by; file names use ``fileStem``, made safe from it.
    public var name: String
    /// The heading of the page.
    public var title: String
    /// A sentence saying what the page shows; nil: one is written from the scope and panels.
    public var description: String?
    /// What the panels are about.
    public var scope: DashboardScope
    /// The panels, drawn in a grid row by row.
    public var panels: [PanelSpec]
    /// Panels per row.
    public var columns: Int

    /// A dashboard; `columns` is at least 1.
    public init(
        name: String, title: String, description: String? = nil, scope: DashboardScope, panels: [PanelSpec],
        columns: Int = 2
    ) {
        self.name = name
        self.title = title
        self.description = description
        self.scope = scope
        self.panels = panels
        self.columns = max(1, columns)
    }
}

/// What a dashboard is about.
public enum DashboardScope: Sendable, Hashable, CustomStringConvertible {
    /// Every counted interface of every host.
    case fleet
    /// One agent's host.
    case host(String)
    /// The hosts with one label value (`site=fra1`).
    case group(GroupKey)

    /// `fleet`, `host web-01`, `group site=fra1`.
    public var description: String {
        switch self {
        case .fleet: "fleet"
        case .host(let agent): "host \(agent)"
        case .group(let group): "group \(group)"
        }
    }
}
