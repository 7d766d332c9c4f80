import PulseAnalytics
import PulseCore
import PulseQuery

/// The files an alert event leaves in the alerts directory: `RULE-FINGERPRINT-STATUS-STAMP.svg` (the chart) and
/// `.json` (the event), so `ls` lists an alert's history in time order and retention can read a file's age from
/// its name.
public enum AlertFiles {
    public static func stem(_ event: AlertEvent) -> String {
        "\(FileName.safe(event.rule))-\(event.fingerprint)-\(event.status.rawValue)-\(FileName.stamp(event.at))"
    }

    /// The names of the files the daemon wrote in the alerts directory: retention deletes only those.
    public static func ledger(in directory: String) -> PublishedFiles.Ledger {
        PublishedFiles.Ledger(directory: directory, kind: "alerts")
    }

    /// Deletes event files older than `before` (by the stamp in their names) that the daemon wrote and recorded
    /// (``ledger(in:)``); returns how many. Files of the same pattern that someone else put there stay.
    public static func prune(in directory: String, before: Int64) throws(FileIO.Failure) -> Int {
        guard FileIO.exists(directory) else { return 0 }
        let ledger = ledger(in: directory)
        var doomed = [String]()
        for name in try ledger.names() where name.hasSuffix(".svg") || name.hasSuffix(".json") {
            let base = name.hasSuffix(".svg") ? name.dropLast(4) : name.dropLast(5)
            guard let dash = base.lastIndex(of: "-"),
                let time = FileName.time(ofStamp: base[base.index(after: dash)...]),
                time < before
            else { continue }
            doomed.append(name)
        }
        try PublishedFiles.remove(doomed, in: directory, ledger: ledger)
        return doomed.count
    }
}
