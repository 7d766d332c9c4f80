import Foundation
import PulseCore
import TestSupport

/// Paths of the repository and the freshly built binaries.
enum Build {
    static let root: String = {
        var path = #filePath
        for _ in 0..<4 { path = (path as NSString).deletingLastPathComponent }
        return path
    }()
    static let binaries = root + "/.build/debug"
    static let netpulsed = binaries + "/netpulsed"
    static let agent = binaries + "/netpulse-agent"
    static let cli = binaries + "/netpulse"
}

/// True when the tests run as root, which network namespaces need (CI does).
let isRoot = getuid() == 0

struct CommandFailure: Error, CustomStringConvertible {
    var description: String
}

/// Runs a command to completion (within ``Command/runToEnd(_:_:mergingErrors:timeout:)``'s limit) and returns its
/// standard output.
@discardableResult
func run(_ arguments: [String], allowFailure: Bool = false) throws -> String {
    let finished = try Command.runToEnd("/usr/bin/env", arguments)
    if finished.status != 0 && !allowFailure {
        throw CommandFailure(
            description: "\(arguments.joined(separator: " ")) exited \(finished.status): \(finished.errors)"
        )
    }
    return finished.output
}

/// A long-running process whose output goes to a log file.
final class Daemonized: @unchecked Sendable {
    let process = Process()
    let log: String

    init(_ arguments: [String], log: String, netns: String? = nil) throws {
        self.log = log
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        handle.seekToEndOfFile()
        process.executableURL = URL(fileURLWithPath: netns == nil ? arguments[0] : "/usr/sbin/ip")
        process.arguments = netns.map { ["netns", "exec", $0] + arguments } ?? Array(arguments.dropFirst())
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Sends SIGTERM and waits for the exit status.
    @discardableResult
    func stop(timeout: Double = 15) -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        signal(SIGTERM)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            signal(SIGKILL)
            process.waitUntilExit()
        }
        return process.terminationStatus
    }

    func killHard() {
        signal(SIGKILL)
        process.waitUntilExit()
    }

    var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    deinit { if process.isRunning { killHard() } }
}

/// Runs an async call from the synchronous test helpers (the store's API is async).
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try box.result!.get()
}

/// Where ``blocking(_:)`` leaves its task's result (written once, read after the semaphore).
final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}

/// Polls `condition` until it holds or `timeout` seconds pass.
func eventually(
    _ what: String, timeout: Double = 20, interval: Double = 0.1, _ condition: () throws -> Bool
) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if (try? condition()) == true { return }
        Thread.sleep(forTimeInterval: interval)
    }
    if try condition() { return }
    throw CommandFailure(description: "timed out after \(timeout)s waiting for: \(what)")
}

/// A free TCP port on 127.0.0.1 (bound and released, so a later bind normally succeeds).
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    guard bound == 0 else { throw CommandFailure(description: "bind failed: \(errno)") }
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// The value of an unlabelled metric in a Prometheus text exposition (nil when it is absent).
func gauge(_ name: String, in exposition: String) -> Double? {
    exposition.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap {
        Double($0.dropFirst(name.count + 1))
    }
}
