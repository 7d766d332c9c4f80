import Foundation
import PulseCore

/// Labels as stored in the agent table's text column: a JSON array of `[key, value]` pairs, so no value, whatever
/// it holds, can read back as another label.
///
/// Stores written before this kept `key=value` lines; those are still read (the line break was the separator, which
/// is why a value with one became a second label: values may no longer hold control characters).
package enum LabelText {
    package static func encode(_ labels: Labels) -> String {
        JSONText.array(labels.pairs.map { JSONText.array(strings: [$0.key, $0.value]) })
    }

    package static func decode(_ text: String) -> Labels {
        if text.hasPrefix("[") {
            let pairs = (try? JSONDecoder().decode([[String]].self, from: Data(text.utf8))) ?? []
            return Labels(pairs.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil })
        }
        return Labels(
            text.split(separator: "\n").compactMap { line in
                line.firstIndex(of: "=").map { (String(line[..<$0]), String(line[line.index(after: $0)...])) }
            })
    }
}
