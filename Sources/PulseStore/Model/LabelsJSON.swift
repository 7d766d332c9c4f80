import Foundation

/// Label maps and string lists as the JSON text both stores keep them in (alerts' labels and annotations, silences'
/// matchers, notification groups): keys sorted, so equal maps are equal text.
package enum LabelsJSON {
    package static func text(_ value: [String: String]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    package static func text(_ value: [String]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: value)) ?? Data("[]".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The map in `text` (empty when it is not one).
    package static func labels(_ text: String) -> [String: String] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: String] ?? [:]
    }

    /// The strings in `text` (none when it is not a list of strings).
    package static func strings(_ text: String) -> [String] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String] ?? []
    }
}
