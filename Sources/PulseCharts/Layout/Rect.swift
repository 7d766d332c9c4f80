/// A rectangle in SVG pixels, y growing downwards.
struct Rect: Sendable, Hashable {
    var minX: Double
    var minY: Double
    var maxX: Double
    var maxY: Double

    init(minX: Double, minY: Double, maxX: Double, maxY: Double) {
        self.minX = minX
        self.minY = minY
        self.maxX = max(maxX, minX)
        self.maxY = max(maxY, minY)
    }

    /// The rectangle spanned by two corners in any order.
    init(corners x0: Double, _ y0: Double, _ x1: Double, _ y1: Double) {
        self.init(minX: min(x0, x1), minY: min(y0, y1), maxX: max(x0, x1), maxY: max(y0, y1))
    }

    var width: Double { maxX - minX }
    var height: Double { maxY - minY }
    var midX: Double { (minX + maxX) / 2 }
    var midY: Double { (minY + maxY) / 2 }
}
