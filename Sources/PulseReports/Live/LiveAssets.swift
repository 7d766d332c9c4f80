/// The live dashboards' script and style sheet, compiled into the binary from `Live/Assets` (`.embedInCode`).
public enum LiveAssets {
    /// `/assets/netpulse.js`.
    public static let script = String(decoding: PackageResources.netpulse_js, as: UTF8.self)
    /// The layout and colours of the pages; ``LivePages/styleSheet()`` adds the charts' dark colours.
    static let styleSheet = String(decoding: PackageResources.netpulse_css, as: UTF8.self)
}
