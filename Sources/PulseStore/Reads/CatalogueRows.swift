import PulseAnalytics
import PulseCore

/// Catalogue records from their columns, as every store reads them.
package enum CatalogueRows {
    /// A series from `series` joined with its agent's name and its state's last sample; nil for an unknown kind.
    package static func series(
        id: Int64, kind rawKind: Int64, agent: [UInt8]?, name: [UInt8], firstSeen: Int64, facts: [Int64],
        lastState: [UInt8]?
    ) -> SeriesRecord? {
        guard let kind = SeriesKind(rawValue: Int(rawKind)) else { return nil }
        let agent = agent.map { String(decoding: $0, as: UTF8.self) }
        var record = SeriesRecord(id: id, kind: kind, firstSeen: firstSeen, lastSeen: firstSeen)
        switch kind {
        case .interface:
            record.agent = agent
            record.interface = InterfaceName(bytes: name)
            record.facts = StoreWriter.linkState(facts)
            if let lastState, let sample = try? SampleCoding.decode(lastState) { record.lastSeen = sample.time }
        case .host: record.agent = agent
        case .group: record.group = GroupKey(parsing: String(decoding: name, as: UTF8.self))
        case .fleet: break
        }
        return record
    }
}
