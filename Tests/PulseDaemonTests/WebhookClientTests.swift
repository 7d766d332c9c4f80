import Foundation
import Logging
import PulseCore
import Testing

@testable import PulseDaemon

/// The client's timeout bounds a whole attempt, against peers on loopback that misbehave (a Python script each): one
/// that never answers, one whose body never ends; and a refused connection fails at once, leaving the wait to the
/// caller's backoff. The upper bounds on times are loose: the whole suite runs in parallel on two cores.
@Suite(.serialized, .timeLimit(.minutes(1))) struct WebhookClientTests {
    /// A TCP peer on 127.0.0.1 that reads a request and then, by `mode`, says nothing (`silent`) or sends a head and a
    /// body of one byte every 100 ms that never ends (`trickle`).
    final class Peer {
        let process = Process()
        let port: Int

        static let script = """
            import socket, sys, threading, time
            server = socket.socket()
            server.bind(("127.0.0.1", 0))
            server.listen()
            print(server.getsockname()[1], flush=True)
            def serve(connection):
                connection.recv(65536)
                if sys.argv[1] == "trickle":
                    connection.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 1000000\\r\\n\\r\\n")
                    while True:
                        connection.sendall(b"x")
                        time.sleep(0.1)
                time.sleep(3600)
            while True:
                connection, _ = server.accept()
                threading.Thread(target=serve, args=(connection,), daemon=True).start()
            """

        init(_ mode: String) throws {
            let output = Pipe()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = ["-c", Self.script, mode]
            process.standardOutput = output
            try process.run()
            var line = Data()
            while let byte = try output.fileHandleForReading.read(upToCount: 1), let first = byte.first,
                first != UInt8(ascii: "\n")
            {
                line.append(first)
            }
            port = try #require(Int(String(decoding: line, as: UTF8.self)))
        }

        deinit {
            // SIGKILL: a child of the test process starts with SIGTERM blocked.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The error of a post to `url` that must fail, and how long it took.
    func failure(_ url: String, timeout: Int64) async throws -> (String, Duration) {
        let target = try WebhookTarget(url: url, caFile: nil, bearerTokenFile: nil, timeout: timeout)
        let started = ContinuousClock.now
        do {
            let response = try await WebhookClient.with(logger: Logger(label: "test"), purpose: "test") {
                try await $0.post(Array("{}".utf8), to: target)
            }
            Issue.record("answered \(response.status)")
            return ("", ContinuousClock.now - started)
        } catch {
            return ("\(error)", ContinuousClock.now - started)
        }
    }

    @Test func aReceiverThatNeverAnswersFailsAtTheTimeout() async throws {
        let peer = try Peer("silent")
        let (error, took) = try await failure("http://127.0.0.1:\(peer.port)/hook", timeout: 700)
        #expect(error == "no answer within 700ms")
        #expect(took >= .milliseconds(650) && took < .seconds(15), "\(took)")
    }

    @Test func aBodyThatNeverEndsIsCutAtTheTimeout() async throws {
        let peer = try Peer("trickle")
        let (error, took) = try await failure("http://127.0.0.1:\(peer.port)/hook", timeout: 1_000)
        #expect(error == "no answer within 1s")
        #expect(took >= .milliseconds(950) && took < .seconds(15), "\(took)")
    }

    @Test func aRefusedConnectionFailsAtOnceNamingTheReceiver() async throws {
        // A port that was free a moment ago: nothing listens there.
        let port: Int
        do {
            let peer = try Peer("silent")
            port = peer.port
        }
        // Well within the timeout: the pool does not keep trying to connect until the deadline.
        let (error, took) = try await failure("http://127.0.0.1:\(port)/hook", timeout: 30_000)
        #expect(error.hasPrefix("cannot connect to 127.0.0.1:\(port): "), "\(error)")
        #expect(took < .seconds(15), "\(took)")
    }
}
