import Logging
import PulseCore
import PulseStore
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Whether this daemon leads: keeps bills, evaluates alerts and notifies, forwards, renders, writes snapshots and
/// prunes. With SQLite the one daemon always leads; on PostgreSQL the leader is the holder of the lease
/// (``LeaseService``), and the store refuses its leader-only writes once the lease is gone (fencing).
final class Leadership: Sendable {
    private let leading: Atomic<Bool>

    init(leading: Bool) { self.leading = Atomic(leading) }

    var isLeader: Bool { leading.load(ordering: .acquiring) }
    func set(_ value: Bool) { leading.store(value, ordering: .releasing) }
}

/// Holds the leader lease of a PostgreSQL store (``SharedStore/holdLease(holder:ttl:)``): renews it every third
/// of its length while this daemon leads, tries to take it as often while another does. This daemon stops acting
/// as the leader as soon as a renewal fails or the lease's length has passed since the last one that succeeded,
/// whichever comes first, so two daemons never act as leaders at once for longer than a write in flight (which
/// the store's fencing then refuses).
final class LeaseService: Service, Sendable {
    let store: any SharedStore
    let leadership: Leadership
    let length: Int64
    let holder: String
    let logger: Logger
    /// Run once each time this daemon takes the lease (work the leader does on taking over).
    let onLeading: @Sendable () async -> Void

    init(
        store: any SharedStore, leadership: Leadership, length: Int64, name: String, logger: Logger,
        onLeading: @escaping @Sendable () async -> Void
    ) {
        self.store = store
        self.leadership = leadership
        self.length = length
        // Unique to this process: a restarted daemon is a new holder, and takes a new token.
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, host.count - 1)
        let hostname = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        holder = "\(name)@\(hostname) pid \(getpid()) \(UInt32.random(in: 0...UInt32.max))"
        self.logger = logger
        self.onLeading = onLeading
    }

    func run() async throws {
        var renewed: ContinuousClock.Instant?
        var first = true
        while !Task.isShuttingDownGracefully {
            let attempt = ContinuousClock.now
            do {
                let token = try await store.holdLease(holder: holder, ttl: length)
                if let token {
                    renewed = attempt
                    if !leadership.isLeader {
                        logger.notice("leader: this daemon took the lease (fencing token \(token))")
                        leadership.set(true)
                        await onLeading()
                    }
                } else {
                    renewed = nil
                    if first {
                        logger.notice(
                            "leader: another daemon holds the lease; this one stores what agents send, and takes over if the leader goes"
                        )
                    }
                    step(down: "another daemon holds the lease")
                }
            } catch {
                logger.warning("leader: cannot renew the lease: \(error)")
                if let last = renewed, ContinuousClock.now - last >= .milliseconds(length) {
                    renewed = nil
                    step(down: "the lease expired while it could not be renewed")
                }
            }
            first = false
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(self.length / 3)) }
            } catch {
                break
            }
            // Frozen or slow past the lease's end: it may be another's already.
            if let last = renewed, ContinuousClock.now - last >= .milliseconds(length) {
                renewed = nil
                step(down: "the lease ran out before it was renewed")
            }
        }
        if leadership.isLeader {
            step(down: "stopping")
            try? await store.releaseLease(holder: holder)
        }
    }

    private func step(down reason: String) {
        store.dropFence()
        guard leadership.isLeader else { return }
        leadership.set(false)
        logger.notice("leader: this daemon no longer leads (\(reason)); it keeps storing what agents send")
    }
}

/// Runs a service only while this daemon leads: started when it takes the lease, cancelled when it loses it.
final class LeaderOnly: Service, Sendable {
    let inner: any Service
    let leadership: Leadership

    init(_ inner: any Service, leadership: Leadership) {
        self.inner = inner
        self.leadership = leadership
    }

    func run() async throws {
        while !Task.isShuttingDownGracefully {
            while !leadership.isLeader {
                do {
                    try await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(100)) }
                } catch {
                    return
                }
            }
            let inner = self.inner
            let running = Task { try await inner.run() }
            while leadership.isLeader && !Task.isShuttingDownGracefully {
                do {
                    try await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(100)) }
                } catch {
                    break
                }
            }
            // Lost the lease: stop now. Stopping: the service ends its work as it does on any graceful stop.
            if !Task.isShuttingDownGracefully { running.cancel() }
            _ = await running.result
        }
    }
}
