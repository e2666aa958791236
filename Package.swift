// swift-tools-version:6.0
import PackageDescription

// Layers (each depends only on those above it):
//   CLibWebSockets, CLibPQ, CNcurses,
//   CStaffcastSocket, CStaffcastTLS   – system-library shims; the only places C is imported
//                                       (CStaffcastSocket: epoll, SO_REUSEPORT listen, accept4;
//                                        CStaffcastTLS: OpenSSL for the clients' https/wss)
//   StaffcastCore                     – pure Swift, no C, no I/O: domain, protocol codec, HTTP framing,
//                                       and the fan-out engine (a state machine: events in, actions out)
//   StaffcastPostgres                 – the store on libpq (only importer of CLibPQ)
//   StaffcastServer                   – libwebsockets transport + HTTP API (only importer of CLibWebSockets),
//                                       and the outbox's deliveries (only importer of CLibCurl)
//   StaffcastQR                       – QR codes of invite links (only importer of CQREncode)
//   StaffcastClient                   – WebSocket/HTTP client (TLS through CStaffcastTLS) used by `send`, `watch` and the tests
//   staffcast                         – the one executable (swift-argument-parser)
// The products taken from the dependencies, each named once.
let argumentParser = Target.Dependency.product(name: "ArgumentParser", package: "swift-argument-parser")
let logging = Target.Dependency.product(name: "Logging", package: "swift-log")
let crypto = Target.Dependency.product(name: "Crypto", package: "swift-crypto")
let metrics = Target.Dependency.product(name: "Metrics", package: "swift-metrics")
let prometheus = Target.Dependency.product(name: "Prometheus", package: "swift-prometheus")
let yams = Target.Dependency.product(name: "Yams", package: "Yams")
let serviceLifecycle = Target.Dependency.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let unixSignals = Target.Dependency.product(name: "UnixSignals", package: "swift-service-lifecycle")

let package = Package(
    name: "staffcast",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "staffcast", targets: ["staffcast"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.1"),
        // The ServiceGroup that owns SIGTERM/SIGINT and the order `staffcast serve` shuts down in.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .systemLibrary(name: "CLibWebSockets", pkgConfig: "libwebsockets",
                       providers: [.apt(["libwebsockets-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq",
                       providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CNcurses", providers: [.apt(["libncurses-dev"])]),
        .systemLibrary(name: "CStaffcastSocket"),
        .systemLibrary(name: "CStaffcastTLS", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CQREncode", providers: [.apt(["libqrencode-dev"])]),
        // libcurl for the outbox's deliveries: HTTPS (Web Push, webhooks) and SMTP. Only
        // StaffcastServer's `CurlEasy` imports it.
        .systemLibrary(name: "CLibCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // QR codes of invite links (libqrencode; the only importer of CQREncode).
        .target(name: "StaffcastQR", dependencies: ["CQREncode"]),
        // Cross-module optimisation: the engine, hub and queues are generic over the frame type and
        // are called from StaffcastServer on every delivery; without their bodies there, every
        // call went through runtime generic metadata (a third of the service loop in perf).
        .target(name: "StaffcastCore",
                swiftSettings: [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))]),
        // Migrations is a symlink to sql/ (the source of truth), compiled into the binary so it
        // runs from any folder (EmbeddedMigrations.swift).
        .target(name: "StaffcastPostgres", dependencies: ["CLibPQ", "StaffcastCore", logging, crypto],
                resources: [.embedInCode("Migrations")]),
        .target(name: "StaffcastServer", dependencies: [
            "CLibWebSockets", "CStaffcastSocket", "CLibCurl", "StaffcastCore", "StaffcastPostgres", "StaffcastQR",
            logging, crypto, metrics, prometheus, serviceLifecycle,
        ],
        // Compiled into the binary (PackageResources), so a copied or installed binary needs no
        // files beside it: the web console and the staff app (Web/Assets), and
        // Docs/openapi.yaml (a link to docs/openapi.yaml).
        resources: [.embedInCode("Web/Assets"), .embedInCode("Docs/openapi.yaml")]),
        .target(name: "StaffcastClient", dependencies: ["StaffcastCore", "CStaffcastTLS", crypto]),
        .executableTarget(name: "staffcast", dependencies: [
            "StaffcastCore", "StaffcastPostgres", "StaffcastServer", "StaffcastClient", "StaffcastQR", "CNcurses",
            argumentParser, logging, yams, serviceLifecycle, unixSignals,
        ]),
        .systemLibrary(name: "CBenchEpoll", path: "bench/Sources/CBenchEpoll"),
        .executableTarget(name: "staffcast-bench", dependencies: ["CBenchEpoll", "CStaffcastTLS"], // self-contained: builds whatever state the server is in
                          path: "bench/Sources/staffcast-bench"),
        .testTarget(name: "StaffcastCoreTests", dependencies: [
            "StaffcastCore", crypto, // SHA-1 for the WebSocket handshake's tests
        ]),
        .testTarget(name: "StaffcastClientTests", dependencies: ["StaffcastCore", "StaffcastClient", "StaffcastQR"]),
        // Tests only: each test process closes the pipes and sockets it inherited from
        // `swift test --parallel` as it starts (CloseInheritedDescriptors.c says why).
        .target(name: "CTestDescriptors", path: "Tests/CTestDescriptors"),
        .testTarget(name: "StaffcastIntegrationTests", dependencies: [
            "StaffcastCore", "StaffcastPostgres", "StaffcastServer", "StaffcastClient", "CTestDescriptors", crypto,
        ]),
    ]
)
