import Foundation
import PulseCore

/// Label maps and string lists as the JSON text both stores keep them in (alerts' labels and annotations, silences'
/// matchers, notification groups): keys sorted, so equal maps are equal text.
package enum LabelsJSON {
    package static func text(_ value: [String: String]) -> String { JSONText.object(strings: value) }

    package static func text(_ value: [String]) -> String { JSONText.array(strings: value) }

    /// The map in `text` (empty when it is not one).
    package static func labels(_ text: String) -> [String: String] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: String] ?? [:]
    }

    /// The strings in `text` (none when it is not a list of strings).
    package static func strings(_ text: String) -> [String] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String] ?? []
    }
}
