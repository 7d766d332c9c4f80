/// Builds chart content from marks written one after another, with `if`, `if`/`else` and `for`.
@resultBuilder
public enum ChartContentBuilder {
    @inlinable
    public static func buildExpression<Content: ChartContent>(_ content: Content) -> Content {
        content
    }

    @inlinable
    public static func buildBlock() -> EmptyChartContent {
        EmptyChartContent()
    }

    @inlinable
    public static func buildPartialBlock<Content: ChartContent>(first: Content) -> Content {
        first
    }

    @inlinable
    public static func buildPartialBlock<First: ChartContent, Next: ChartContent>(
        accumulated: First, next: Next
    ) -> PairChartContent<First, Next> {
        PairChartContent(first: accumulated, second: next)
    }

    @inlinable
    public static func buildOptional<Content: ChartContent>(_ content: Content?) -> OptionalChartContent<Content> {
        OptionalChartContent(content: content)
    }

    @inlinable
    public static func buildEither<First: ChartContent, Second: ChartContent>(
        first: First
    ) -> ConditionalChartContent<First, Second> {
        ConditionalChartContent(storage: .first(first))
    }

    @inlinable
    public static func buildEither<First: ChartContent, Second: ChartContent>(
        second: Second
    ) -> ConditionalChartContent<First, Second> {
        ConditionalChartContent(storage: .second(second))
    }

    @inlinable
    public static func buildArray<Content: ChartContent>(_ contents: [Content]) -> ArrayChartContent<Content> {
        ArrayChartContent(contents: contents)
    }

    @inlinable
    public static func buildLimitedAvailability<Content: ChartContent>(_ content: Content) -> Content {
        content
    }
}

/// No marks.
public struct EmptyChartContent: ChartContent, Sendable {
    @inlinable public init() {}
    @inlinable public var body: EmptyChartContent { self }
    @inlinable public func _collect(into collector: inout ChartContentCollector) {}
}

/// Two pieces of content drawn one after the other.
public struct PairChartContent<First: ChartContent, Second: ChartContent>: PrimitiveChartContent {
    @usableFromInline var first: First
    @usableFromInline var second: Second

    @usableFromInline
    init(first: First, second: Second) {
        self.first = first
        self.second = second
    }

    @inlinable
    public func _collect(into collector: inout ChartContentCollector) {
        first._collect(into: &collector)
        second._collect(into: &collector)
    }
}

/// Content that appears when a condition holds.
public struct OptionalChartContent<Content: ChartContent>: PrimitiveChartContent {
    @usableFromInline var content: Content?

    @usableFromInline
    init(content: Content?) {
        self.content = content
    }

    @inlinable
    public func _collect(into collector: inout ChartContentCollector) {
        content?._collect(into: &collector)
    }
}

/// One of two pieces of content, from `if`/`else`.
public struct ConditionalChartContent<First: ChartContent, Second: ChartContent>: PrimitiveChartContent {
    @usableFromInline
    enum Storage {
        case first(First)
        case second(Second)
    }

    @usableFromInline var storage: Storage

    @usableFromInline
    init(storage: Storage) {
        self.storage = storage
    }

    @inlinable
    public func _collect(into collector: inout ChartContentCollector) {
        switch storage {
        case .first(let content): content._collect(into: &collector)
        case .second(let content): content._collect(into: &collector)
        }
    }
}

/// Content repeated by a `for` loop.
public struct ArrayChartContent<Content: ChartContent>: PrimitiveChartContent {
    @usableFromInline var contents: [Content]

    @usableFromInline
    init(contents: [Content]) {
        self.contents = contents
    }

    @inlinable
    public func _collect(into collector: inout ChartContentCollector) {
        for content in contents {
            content._collect(into: &collector)
        }
    }
}

extension PairChartContent: Sendable where First: Sendable, Second: Sendable {}
extension OptionalChartContent: Sendable where Content: Sendable {}
extension ConditionalChartContent: Sendable where First: Sendable, Second: Sendable {}
extension ConditionalChartContent.Storage: Sendable where First: Sendable, Second: Sendable {}
extension ArrayChartContent: Sendable where Content: Sendable {}
