// swift-tools-version:6.1
import PackageDescription

// The agent links only PulseAgent + PulseCore (SwiftNIO, swift-nio-ssl, swift-log, service-lifecycle):
// no chart, storage or certificate-authority code, and no full Foundation (it loads ICU, ~17 MiB RSS).
// The three programs carry the Swift runtime (and the daemon and CLI Foundation), linked statically, in every build:
// a host needs no Swift (the packages depend only on Debian's libraries), and the tests run what the packages
// install. Linked at the products only: their modules compile as usual, so the debug build serves the tests and the
// packages alike. Foundation's static libraries are named as one group: left to the driver, some are missing and the
// rest come in an order the linker cannot resolve for a program that reaches Foundation's Bundle, as `netpulse`
// does (swiftlang/swift-package-manager issue 10564).
let staticSwiftRuntime: [LinkerSetting] = [.unsafeFlags(["-static-stdlib"])]
let staticFoundation: [LinkerSetting] = [
    .unsafeFlags(
        ["-static-stdlib", "-Xlinker", "--start-group"]
            + [
                "Foundation", "FoundationInternationalization", "FoundationEssentials", "CoreFoundation",
                "_FoundationICU", "_FoundationCollections", "_FoundationCShims", "swiftSynchronization",
            ].flatMap { ["-Xlinker", "-l\($0)"] } + ["-Xlinker", "--end-group"])
]

let package = Package(
    name: "netpulse",
    products: [
        .executable(name: "netpulse-agent", targets: ["netpulse-agent"]),
        .executable(name: "netpulsed", targets: ["netpulsed"]),
        .executable(name: "netpulse", targets: ["netpulse"]),
        .library(name: "PulseCharts", targets: ["PulseCharts"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // The daemon's read-only HTTP server (`[http]`): the API, its metrics and the live dashboards.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
    ],
    targets: [
        // MARK: Libraries
        .target(
            name: "PulseCore",
            dependencies: [
                "CSchedule",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // A thread's scheduling slice (sched_getattr/sched_setattr, which glibc does not wrap): see ThreadPriority.
        .systemLibrary(name: "CSchedule"),
        // libsystemd (apt: libsystemd-dev): readiness, status, watchdog, socket activation, journal.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // libxcrypt (apt: libcrypt-dev, which libc6-dev needs): crypt_r checks the bcrypt hashes of HTTP basic auth.
        .systemLibrary(name: "CCrypt", providers: [.apt(["libcrypt-dev"])]),
        // libsnappy (apt: libsnappy-dev): remote write's block compression.
        .systemLibrary(name: "CSnappy", pkgConfig: "snappy", providers: [.apt(["libsnappy-dev"])]),
        .target(
            name: "PulseSystemd",
            dependencies: ["CSystemd", "PulseCore", .product(name: "Logging", package: "swift-log")]
        ),
        // No swift-service-lifecycle here: see SignalEvents for why the agent handles its signals itself.
        .target(
            name: "PulseAgent",
            dependencies: [
                "PulseCore", "PulseSystemd",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Every setting of netpulsed's config file and its parsing (file:line errors): shared by the daemon and the CLI,
        // which reads the daemon's config without linking the daemon.
        .target(
            name: "PulseSettings",
            dependencies: ["PulseCore", "PulseAnalytics", "PulseStore", "PulseQuery", "PulseFormats", "PulseReports"]
        ),
        .target(
            name: "PulseDaemon",
            dependencies: [
                "PulseCore", "PulseSystemd", "PulseSettings", "PulseStore", "PulseStoreBackends", "PulseAnalytics",
                "PulseQuery",
                "PulseFormats", "PulseReports", "PulseCharts",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // Alert webhooks and remote write: one pooled client with TLS, proxies and deadlines.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // The daemon's own metrics in Prometheus' text format (`[metrics]`).
                .product(name: "Prometheus", package: "swift-prometheus"),
                // Remote write (`[remote_write]`): protobuf requests (the code generated from
                // RemoteWrite/remote_write.proto is committed), compressed by Debian's libsnappy.
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                "CSnappy",
                // `[http]`: hummingbird over the daemon's event loops; TLS from the fleet CA (HTTP/2 by ALPN, so a
                // browser's live pages share one connection), operators by their certificate's role
                // (PulseCertificates) or bcrypt basic auth (CCrypt; SHA-256 of what matched).
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                "PulseCertificates", "CCrypt",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            exclude: ["RemoteWrite/remote_write.proto"]
        ),
        // Window math over rollups: counted steps, spreading, windows, percentiles, billing, top-N. Pure: no I/O,
        // no clocks (times are inputs), so property tests and the oracle can drive it.
        .target(name: "PulseAnalytics", dependencies: ["PulseCore"]),
        // The storage protocol, its models and the counting writer every backend shares; no SQL dialect of its own.
        .target(name: "PulseStore", dependencies: ["PulseCore", "PulseAnalytics"]),
        // The embedded store (the default) and the ingest journal beside it, on GRDB.
        .target(
            name: "PulseStoreSQLite",
            dependencies: [
                "PulseCore", "PulseAnalytics", "PulseStore", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        // The store several daemons share, on postgres-nio's PostgresClient.
        .target(
            name: "PulseStorePostgres",
            dependencies: [
                "PulseCore", "PulseAnalytics", "PulseStore", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Opens the backend a configuration names: the one place the daemon, the CLI and the tools get a store from.
        .target(
            name: "PulseStoreBackends",
            dependencies: [
                "PulseStore", "PulseStoreSQLite", "PulseStorePostgres", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Window queries over any store: figures, traffic tables, top-N, bills (for the daemon's exporters and the CLI).
        .target(name: "PulseQuery", dependencies: ["PulseCore", "PulseAnalytics", "PulseStore"]),
        // Figures → the machine formats (CSV, JSON) and terminal tables, with one escaper per format: snapshots,
        // exports, bills and the alert listing as the CLI and the daemon write them.
        .target(name: "PulseFormats", dependencies: ["PulseCore", "PulseAnalytics", "PulseQuery"]),
        .target(
            name: "PulseCertificates",
            dependencies: [
                "PulseCore",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),

        // Charts: a chart grammar that renders SVG, with no dependencies at all.
        .target(name: "PulseCharts"),
        // Figures → charts and documents: dashboards, alert charts and reports drawn from what PulseQuery read, and
        // published to disk. Pure drawing: no store, the same figures give the same bytes.
        .target(
            name: "PulseReports",
            dependencies: [
                "PulseCore", "PulseAnalytics", "PulseQuery", "PulseFormats", "PulseCharts",
                // SHA-256 for the reports' checksum manifests.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            // The live dashboards' script and style sheet, compiled into the binary: a daemon serves them without a
            // resource bundle beside it (one file to package, nothing to lose).
            resources: [.embedInCode("Live/Assets/netpulse.js"), .embedInCode("Live/Assets/netpulse.css")]
        ),

        // MARK: Executables (thin: parse arguments, load config, run services)
        .executableTarget(
            name: "netpulse-agent",
            dependencies: ["PulseAgent", "PulseCore", "PulseSystemd", .product(name: "Logging", package: "swift-log")],
            linkerSettings: staticSwiftRuntime
        ),
        .executableTarget(
            name: "netpulsed",
            dependencies: [
                "PulseDaemon", "PulseSettings", "PulseSystemd", "PulseCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            linkerSettings: staticFoundation
        ),
        .executableTarget(
            name: "netpulse",
            dependencies: [
                "PulseAgent", "PulseSettings", "PulseCertificates", "PulseStore", "PulseStoreBackends", "PulseQuery",
                "PulseAnalytics",
                "PulseReports", "PulseFormats", "PulseCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // `netpulse --daemon URL`: the daemon's HTTP API over its Unix socket or HTTPS.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            linkerSettings: staticFoundation
        ),

        // MARK: Benchmarks (release builds, run by scripts/bench.sh, not by the tests)
        .executableTarget(
            name: "netpulse-bench",
            dependencies: [
                "PulseStorePostgres", "PulseStoreSQLite",
                "PulseCore", "PulseDaemon", "PulseSettings", "PulseCertificates", "PulseStore", "PulseAnalytics",
                "PulseQuery",
                "PulseReports", "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
            ],
            path: "Benchmarks/netpulse-bench"
        ),

        // The stateful fuzz target: frames of several agents through the connection state machine into a real SQLite
        // store (scripts/fuzz.sh; Fuzz/Ingest/main.swift says how to run it under libFuzzer).
        .executableTarget(
            name: "netpulse-fuzz-ingest",
            dependencies: [
                "PulseCore", "PulseAnalytics", "PulseStore", "PulseStoreSQLite", "PulseDaemon", "PulseSettings",
                "TestSupport",
            ],
            path: "Fuzz/Ingest"
        ),

        .executableTarget(
            name: "pulsecharts-bench",
            dependencies: ["PulseCharts"],
            path: "Benchmarks/pulsecharts-bench"
        ),

        // MARK: Tests
        .testTarget(name: "PulseCoreTests", dependencies: ["PulseCore", "TestSupport"]),
        .testTarget(
            name: "PulseAgentTests",
            dependencies: ["PulseAgent", "PulseCore", "TestSupport", .product(name: "Logging", package: "swift-log")],
            exclude: ["Fixtures"]),
        .testTarget(name: "PulseAnalyticsTests", dependencies: ["PulseAnalytics", "PulseCore", "TestSupport"]),
        // The window engine against Tests/Oracle/oracle.py, an independent reference written from docs/windows.md.
        .testTarget(
            name: "OracleTests",
            dependencies: [
                "PulseStorePostgres", "PulseStoreSQLite",
                "OracleSupport", "PulseStore", "PulseQuery", "PulseAnalytics", "PulseCore", "PulseReports",
                "PulseAgent", "PulseDaemon", "TestSupport",
            ]
        ),
        // The oracle's cases (generated agents), its runner and the comparison with a store: shared by OracleTests and
        // the end-to-end test that kills the daemon under load.
        .target(
            name: "OracleSupport",
            dependencies: [
                "PulseStore", "PulseQuery", "PulseAnalytics", "PulseCore", "PulseDaemon", "PulseSettings",
                "TestSupport",
            ],
            path: "Tests/OracleSupport"
        ),
        .testTarget(
            name: "PulseStoreTests",
            dependencies: [
                "PulseStorePostgres", "PulseStoreSQLite",
                "PulseStore", "PulseQuery", "PulseAnalytics", "PulseCore", "TestSupport", "StoreFixtures",
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "PulseSystemdTests",
            dependencies: ["PulseSystemd", "PulseCore", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "PulseDaemonTests",
            dependencies: [
                "PulseStoreSQLite",
                "PulseDaemon", "PulseSettings", "PulseStore", "PulseAnalytics", "PulseQuery", "PulseReports",
                "PulseCore", "PulseCertificates", "TestSupport",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // What several test targets and the benchmarks share: the SVG checker (xmllint and rsvg-convert,
        // Tests/Tools/check_outputs.py), throwaway PostgreSQL servers, an agent sending the largest batches.
        .target(
            name: "TestSupport",
            dependencies: [
                "PulseCore", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Tests/TestSupport"
        ),
        .testTarget(name: "PulseChartsTests", dependencies: ["PulseCharts", "TestSupport"], exclude: ["Golden"]),
        // A small fleet in a real SQLite store, shared by the tests of what is read (PulseQueryTests) and drawn
        // (PulseReportsTests).
        .target(
            name: "StoreFixtures",
            dependencies: ["PulseStoreSQLite", "PulseStore", "PulseQuery", "PulseAnalytics", "PulseCore"],
            path: "Tests/StoreFixtures"
        ),
        .testTarget(
            name: "PulseFormatsTests", dependencies: ["PulseFormats", "PulseQuery", "PulseAnalytics", "PulseCore"]
        ),
        .testTarget(
            name: "PulseQueryTests",
            dependencies: ["PulseQuery", "PulseStore", "PulseAnalytics", "StoreFixtures"]
        ),
        .testTarget(
            name: "PulseReportsTests",
            dependencies: [
                "PulseReports", "PulseCharts", "PulseQuery", "PulseStore", "PulseAnalytics", "PulseCore", "TestSupport",
                "StoreFixtures",
            ]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "PulseStorePostgres", "PulseStoreSQLite",
                "PulseCore", "PulseStore", "PulseAnalytics", "OracleSupport", "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .testTarget(
            name: "PulseCertificatesTests",
            dependencies: [
                "PulseCertificates", "TestSupport",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
