import PulseAnalytics
import PulseCore
import PulseStore

/// The files an alert event leaves in the alerts directory: `RULE-FINGERPRINT-STATUS-STAMP.svg` (the chart) and
/// `.json` (the event), so `ls` lists an alert's history in time order and retention can read a file's age from
/// its name.
public enum AlertFiles {
    public static func stem(_ event: AlertEvent) -> String {
        "\(FileName.safe(event.rule))-\(event.fingerprint)-\(event.status.rawValue)-\(FileName.stamp(event.at))"
    }

    /// Deletes event files older than `before` (by the stamp in their names); returns how many.
    public static func prune(in directory: String, before: Int64) throws(FileIO.Failure) -> Int {
        guard FileIO.exists(directory) else { return 0 }
        var removed = 0
        for name in try FileIO.listDirectory(directory) where name.hasSuffix(".svg") || name.hasSuffix(".json") {
            let base = name.hasSuffix(".svg") ? name.dropLast(4) : name.dropLast(5)
            guard let dash = base.lastIndex(of: "-"),
                let time = FileName.time(ofStamp: base[base.index(after: dash)...]),
                time < before
            else { continue }
            try FileIO.remove("\(directory)/\(name)")
            removed += 1
        }
        return removed
    }
}
