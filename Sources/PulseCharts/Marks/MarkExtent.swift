/// Where a bar, rectangle or rule stands: a value or a range on each axis.
///
/// Each end is optional because these marks fill the plot along an axis they are not given a value on (a rule
/// at a `y` runs across the whole width, a band from `xStart` to `xEnd` covers the whole height).
@usableFromInline
struct MarkExtent: Sendable {
    @usableFromInline var x: ChannelInput?
    @usableFromInline var xEnd: ChannelInput?
    @usableFromInline var y: ChannelInput?
    @usableFromInline var yEnd: ChannelInput?

    @usableFromInline
    init() {}
}
