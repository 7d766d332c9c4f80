/// The version of this build, reported in `HELLO` and by `--version`.
public enum NetpulseVersion {
    public static let string = "0.2.0"
}
