import Logging
import PulseCore
import Testing

@testable import PulseSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// A datagram socket standing in for systemd's notification socket.
final class FakeNotifySocket {
    let path: String
    let fd: Int32

    init() throws {
        path = "/tmp/netpulse-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        unlink(path)
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0)
        setenv("NOTIFY_SOCKET", path, 1)
    }

    /// The next datagram, or nil after `timeout` seconds.
    func receive(timeout: Double = 2) -> String? {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, Int32(timeout * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
    }

    /// Every datagram that arrives within `seconds`.
    func drain(for seconds: Double) -> [String] {
        var messages = [String]()
        let end = MonotonicMilliseconds.now() + Int64(seconds * 1000)
        while MonotonicMilliseconds.now() < end {
            if let message = receive(timeout: Double(max(1, end - MonotonicMilliseconds.now())) / 1000) {
                messages.append(message)
            }
        }
        return messages
    }

    deinit {
        unsetenv("NOTIFY_SOCKET")
        unsetenv("WATCHDOG_USEC")
        close(fd)
        unlink(path)
    }
}

// These tests change the process environment, so they run one at a time, and scripts/test.sh runs this target in
// a process of its own (other targets start processes, which read the environment).
@Suite(.serialized) struct NotifierTests {
    @Test func sendsReadinessStatusReloadAndStopping() throws {
        let socket = try FakeNotifySocket()
        #expect(SystemdNotifier.isAvailable)
        SystemdNotifier.ready(status: "4 interface(s)\nconnected")
        #expect(socket.receive() == "READY=1\nSTATUS=4 interface(s) connected")
        SystemdNotifier.status("2 agent(s) connected")
        #expect(socket.receive() == "STATUS=2 agent(s) connected")
        SystemdNotifier.reloading()
        let reloading = try #require(socket.receive())
        #expect(reloading.hasPrefix("RELOADING=1\nMONOTONIC_USEC="))
        SystemdNotifier.stopping(status: "stopping")
        #expect(socket.receive() == "STOPPING=1\nSTATUS=stopping")
        SystemdNotifier.watchdogPing()
        #expect(socket.receive() == "WATCHDOG=1")
    }

    @Test func everythingIsANoOpOutsideSystemd() {
        unsetenv("NOTIFY_SOCKET")
        unsetenv("WATCHDOG_USEC")
        #expect(!SystemdNotifier.isAvailable)
        #expect(!SystemdNotifier.notify("READY=1"))
        #expect(SystemdNotifier.watchdogPingInterval == nil)
        #expect(SocketActivation.takeListeningSockets().isEmpty)
    }

    @Test func watchdogIntervalIsHalfOfWatchdogSec() throws {
        let socket = try FakeNotifySocket()
        setenv("WATCHDOG_USEC", "30000000", 1)
        #expect(SystemdNotifier.watchdogPingInterval == .seconds(15))
        // A watchdog meant for another process is not ours.
        setenv("WATCHDOG_PID", "1", 1)
        #expect(SystemdNotifier.watchdogPingInterval == nil)
        unsetenv("WATCHDOG_PID")
        _ = socket
    }

    /// The test opens the two sockets it expects to be handed, at descriptors it reserves itself, so nothing else
    /// in the process (other tests open and close sockets in parallel) decides what is open there.
    @Test func socketActivationHandsOverOurSockets() throws {
        let first = try #require(Self.twoFreeDescriptors())
        for descriptor in [first, first + 1] {
            let opened = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            #expect(opened >= 0)
            #expect(dup2(opened, descriptor) == descriptor)
            close(opened)
        }
        defer {
            close(first)
            close(first + 1)
        }
        setenv("LISTEN_PID", "1", 1)
        setenv("LISTEN_FDS", "1", 1)
        #expect(SocketActivation.takeListeningSockets(first: first).isEmpty, "sockets for another process are not ours")
        setenv("LISTEN_PID", "\(getpid())", 1)
        setenv("LISTEN_FDS", "2", 1)
        #expect(SocketActivation.takeListeningSockets(first: first) == [first, first + 1])
        // The environment is cleared so children do not inherit the sockets, and the sockets close on exec.
        #expect(getenv("LISTEN_FDS") == nil && getenv("LISTEN_PID") == nil)
        #expect(fcntl(first, F_GETFD) & FD_CLOEXEC != 0 && fcntl(first + 1, F_GETFD) & FD_CLOEXEC != 0)
        #expect(SocketActivation.takeListeningSockets(first: first).isEmpty, "handed over once")

        // Descriptors that are not open are not taken for sockets.
        setenv("LISTEN_PID", "\(getpid())", 1)
        setenv("LISTEN_FDS", "3", 1)
        #expect(SocketActivation.takeListeningSockets(first: first).isEmpty)
    }

    /// Two adjacent descriptors no one in this process uses, high enough that the runtime will not open them
    /// meanwhile.
    static func twoFreeDescriptors() -> Int32? {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        let top = Int32(min(limit.rlim_cur, 4_096)) - 2
        var candidate = top
        while candidate > 512 {
            if fcntl(candidate, F_GETFD) < 0 && fcntl(candidate + 1, F_GETFD) < 0 && fcntl(candidate + 2, F_GETFD) < 0 {
                return candidate
            }
            candidate -= 3
        }
        return nil
    }

    @Test func standardErrorIsNotTheJournalOnATerminalOrPipe() {
        setenv("JOURNAL_STREAM", "1:1", 1)
        #expect(!JournalLogHandler.standardErrorIsJournal)
        unsetenv("JOURNAL_STREAM")
        #expect(!JournalLogHandler.standardErrorIsJournal)
    }

    /// Pings flow while loops beat, and stop (with a status saying which loop) as soon as one is overdue.
    @Test func watchdogPingsOnlyWhileEveryLoopProgresses() async throws {
        let socket = try FakeNotifySocket()
        setenv("WATCHDOG_USEC", "400000", 1)
        let healthy = LoopHeartbeat("sampling")
        let stuck = LoopHeartbeat("sending")
        healthy.beat(within: 60_000)
        stuck.beat(within: 60_000)
        let watchdog = Watchdog(loops: [healthy, stuck], logger: Logger(label: "test"))
        let task = Task { await watchdog.run() }
        let before = socket.drain(for: 1)
        // Every 200 ms, so five in the second; at least two even while the test run keeps both cores busy (a
        // parallel run once delayed the watchdog's task enough for only two).
        #expect(before.filter { $0 == "WATCHDOG=1" }.count >= 2)

        stuck.beat(within: -LoopHeartbeat.grace - 1)
        let after = socket.drain(for: 1)
        #expect(
            after.first == "STATUS=stalled: sending loop made no progress"
                || after.dropFirst().first == "STATUS=stalled: sending loop made no progress")
        #expect(after.filter { $0 == "WATCHDOG=1" }.count <= 1, "at most one ping already under way")
        task.cancel()
        await task.value
    }
}

@Suite struct JournalFieldTests {
    @Test func metadataKeysBecomeJournalFields() {
        #expect(JournalLogHandler.fieldName("agent") == "AGENT_ID")
        #expect(JournalLogHandler.fieldName("peer") == "PEER")
        #expect(JournalLogHandler.fieldName("alert") == "ALERT")
        #expect(JournalLogHandler.fieldName("_private.key") == "PRIVATE_KEY")
        #expect(JournalLogHandler.priority(.error) == 3)
        #expect(JournalLogHandler.priority(.notice) == 5)
    }
}
