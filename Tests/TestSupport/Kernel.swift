#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The running kernel, for tests of what only some kernels do.
public enum Kernel {
    /// Whether the running kernel's release (`uname -r`, such as "6.18.44-…") is `major.minor` or later.
    public static func isAtLeast(_ major: Int, _ minor: Int) -> Bool {
        var name = utsname()
        guard uname(&name) == 0 else { return false }
        let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let numbers = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        guard numbers.count == 2 else { return false }
        return (numbers[0], numbers[1]) >= (major, minor)
    }
}
