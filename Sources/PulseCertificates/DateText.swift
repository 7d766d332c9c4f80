#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How dates appear in messages: ISO 8601 in UTC, the same for every operator whatever their locale.
public enum DateText {
    public static func format(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle())
    }
}
