import CCrypt
import Crypto
import PulseCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The users of `[http] users_file` and their bcrypt hashes, for HTTP basic auth over TCP: `NAME:HASH` lines as
/// `htpasswd -B` writes them (`#` starts a comment), the convention of Prometheus' `web.config` `basic_auth_users`.
///
/// A hash is checked with libxcrypt's `crypt_r`, which takes a bcrypt hash's whole cost (about 50 ms at cost 10) by
/// design. A browser sends the same credentials with every request, so a pair that matched is remembered, as a
/// SHA-256 of user, salt and password (never the password), until the file changes; at most ``remembered`` of them.
/// The file is read again when its modification time or size changes, so a password is changed without a restart.
final class BasicAuthUsers: Sendable {
    let path: String
    private let state: Mutex<State>

    /// The most matched pairs remembered at once; past it the cache starts again.
    static let remembered = 256

    private struct State {
        var users: [String: String]
        var stamp: FileStamp?
        var matched: Set<[UInt8]>
    }

    /// Reads the file now, so a missing file or a line that is not `NAME:BCRYPT-HASH` stops the daemon's start with
    /// its line.
    init(path: String) throws {
        self.path = path
        let (users, stamp) = try Self.read(path)
        state = Mutex(State(users: users, stamp: stamp, matched: []))
    }

    /// The users as the file says now (read again first if it changed; if it cannot be read now, the users read
    /// last stay).
    private func current() -> [String: String] {
        state.withLock { state -> [String: String] in
            let stamp = FileStamp(path)
            if stamp != state.stamp, let (users, newStamp) = try? Self.read(path) {
                state.users = users
                state.stamp = newStamp
                state.matched = []
            }
            return state.users
        }
    }

    private static func key(_ user: String, _ hash: String, _ password: String) -> [UInt8] {
        Array(SHA256.hash(data: Array("\(user)\u{0}\(hash)\u{0}\(password)".utf8)))
    }

    /// Whether this pair matched before (and the file has not changed since): a SHA-256, no bcrypt.
    func remembered(user: String, password: String) -> Bool {
        guard let hash = current()[user] else { return false }
        let key = Self.key(user, hash, password)
        return state.withLock { $0.matched.contains(key) }
    }

    /// Whether `user` with `password` is in the file: bcrypt's whole cost unless the pair is remembered.
    func check(user: String, password: String) -> Bool {
        guard let hash = current()[user] else {
            // The same work as a real check, so a user's existence does not show in the time taken.
            _ = Self.crypt(password, setting: Self.decoy)
            return false
        }
        let key = Self.key(user, hash, password)
        if state.withLock({ $0.matched.contains(key) }) { return true }
        guard let computed = Self.crypt(password, setting: hash), Self.equal(Array(computed.utf8), Array(hash.utf8))
        else { return false }
        state.withLock { state in
            if state.matched.count >= Self.remembered { state.matched = [] }
            state.matched.insert(key)
        }
        return true
    }

    /// A bcrypt hash of nothing anyone knows, at cost 10, checked against when the user is unknown.
    private static let decoy = "$2b$10$C6UzMDM.H6dfI/f/IKxGhuQOZnb7NoyO4wBFF2u6eS9l07M2QG/Ci"

    static func read(_ path: String) throws -> ([String: String], FileStamp?) {
        let text: String
        do { text = try FileIO.readString(path) } catch {
            throw DaemonError("cannot read [http] users_file \(path): \(error)")
        }
        var users = [String: String]()
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingWhitespace()
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let place = "\(path):\(index + 1)"
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw DaemonError("\(place): not NAME:HASH; make a line with `htpasswd -nB NAME`")
            }
            let name = String(line[..<colon])
            let hash = String(line[line.index(after: colon)...])
            guard ["$2a$", "$2b$", "$2y$"].contains(where: hash.hasPrefix), hash.utf8.count == 60 else {
                throw DaemonError(
                    "\(place): the hash of '\(name)' is not bcrypt ($2y$…, 60 characters); make one with `htpasswd -nB \(name)`"
                )
            }
            guard users[name] == nil else { throw DaemonError("\(place): '\(name)' is listed twice") }
            users[name] = hash
        }
        return (users, FileStamp(path))
    }

    /// `crypt_r` with a state of its own (it is large, so on the heap); nil when the setting is not understood.
    static func crypt(_ password: String, setting: String) -> String? {
        let data = UnsafeMutablePointer<crypt_data>.allocate(capacity: 1)
        defer { data.deallocate() }
        memset(data, 0, MemoryLayout<crypt_data>.size)
        guard let result = crypt_r(password, setting, data) else { return nil }
        let text = String(cString: result)
        // libxcrypt answers a failure with a string starting with '*'.
        return text.hasPrefix("*") ? nil : text
    }

    /// Compares in time that depends on the length only.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}

/// A file's modification time and size, to notice that it changed.
struct FileStamp: Equatable, Sendable {
    let seconds: Int
    let nanoseconds: Int
    let size: Int64

    init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        seconds = info.st_mtim.tv_sec
        nanoseconds = info.st_mtim.tv_nsec
        size = Int64(info.st_size)
    }
}
