// swift-tools-version: 6.2
//
// Sweeper: co-operative Minesweeper for a family on one network, with no server.
// One library module per concern (Docs/ARCHITECTURE.md has the map and what each
// may import); the executables `sweeper` and `sweeperd` are thin layers of
// argument parsing on top.

import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "Sweeper",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "sweeper", targets: ["sweeper"]),
        .executable(name: "sweeperd", targets: ["sweeperd"]),
        .library(name: "SweeperConventions", targets: ["SweeperConventions"]),
        .library(name: "SweeperGame", targets: ["SweeperGame"]),
        .library(name: "SweeperCrypto", targets: ["SweeperCrypto"]),
        .library(name: "SweeperSync", targets: ["SweeperSync"]),
        .library(name: "SweeperMembership", targets: ["SweeperMembership"]),
        // For the fuzz targets in Fuzz/ and the tools in Benchmarks/ (packages
        // of their own that depend on this one).
        .library(name: "SweeperNet", targets: ["SweeperNet"]),
        .library(name: "SweeperEventLoop", targets: ["SweeperEventLoop"]),
        .library(name: "SweeperMessages", targets: ["SweeperMessages"]),
        .library(name: "SweeperControl", targets: ["SweeperControl"]),
        .library(name: "SweeperStore", targets: ["SweeperStore"]),
        .library(name: "SweeperDaemon", targets: ["SweeperDaemon"]),
        .library(name: "SweeperDiscovery", targets: ["SweeperDiscovery"]),
        .library(name: "SweeperWeb", targets: ["SweeperWeb"]),
        .library(name: "SweeperTUI", targets: ["SweeperTUI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // TLS for the web board on the home network.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        // MARK: Conventions every module shares: hex, paths, names, version.
        .target(name: "SweeperConventions", swiftSettings: strict),
        .testTarget(name: "SweeperConventionsTests", dependencies: ["SweeperConventions"], swiftSettings: strict),

        // MARK: The game: pure Swift, no I/O.
        .target(name: "SweeperGame", swiftSettings: strict),
        .testTarget(
            name: "SweeperGameTests",
            dependencies: [
                "SweeperGame",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict
        ),

        // MARK: Crypto and replicated state.
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        .target(name: "SweeperCrypto", dependencies: ["CSodium", "SweeperConventions"], swiftSettings: strict),
        .testTarget(name: "SweeperCryptoTests", dependencies: ["SweeperCrypto"], swiftSettings: strict),
        .target(name: "SweeperSync", dependencies: ["SweeperGame", "SweeperCrypto", "SweeperConventions"], swiftSettings: strict),
        .testTarget(
            name: "SweeperSyncTests",
            dependencies: [
                "SweeperSync", "SweeperCrypto", "SweeperGame", "SweeperConventions",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict
        ),
        // Who is in a circle: signed membership records and the view derived from them.
        .target(name: "SweeperMembership", dependencies: ["SweeperCrypto", "SweeperSync", "SweeperConventions"], swiftSettings: strict),
        .testTarget(
            name: "SweeperMembershipTests",
            dependencies: ["SweeperMembership", "SweeperCrypto", "SweeperSync", "SweeperConventions"],
            swiftSettings: strict
        ),

        // MARK: Storage, control socket, daemon.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(
            name: "SweeperStore",
            dependencies: ["CSQLite", "SweeperConventions"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SweeperStoreTests",
            dependencies: ["SweeperStore"],
            swiftSettings: strict
        ),
        // Swift concurrency on a SwiftNIO event loop: the daemon's tasks and the client's.
        .target(
            name: "SweeperEventLoop",
            dependencies: [.product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SweeperEventLoopTests",
            dependencies: ["SweeperEventLoop", .product(name: "NIOPosix", package: "swift-nio")],
            swiftSettings: strict
        ),
        .target(
            name: "SweeperControl",
            dependencies: [
                "SweeperConventions", "SweeperEventLoop",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SweeperControlTests",
            dependencies: [
                "SweeperControl",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "SweeperDaemon",
            dependencies: [
                "SweeperGame", "SweeperStore", "SweeperControl", "SweeperNet", "SweeperMessages", "SweeperDiscovery", "SweeperSync", "SweeperCrypto",
                "SweeperConventions", "SweeperMembership", "SweeperEventLoop", "SweeperWeb",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SweeperDaemonTests",
            dependencies: [
                "SweeperDaemon", "SweeperControl", "SweeperConventions", "SweeperStore", "SweeperSync", "SweeperCrypto", "SweeperGame",
                "SweeperDiscovery", "SweeperNet", "SweeperMessages", "SweeperEventLoop",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: strict
        ),
        // The web board: the page (embedded from Sources/SweeperWeb/Page) and
        // its HTTP and WebSocket server on loopback, which speaks the control protocol.
        .target(
            name: "SweeperWeb",
            dependencies: [
                "SweeperControl", "SweeperConventions", "SweeperEventLoop", "SweeperCrypto",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.embedInCode("Page")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SweeperWebTests",
            dependencies: [
                "SweeperWeb", "SweeperControl", "SweeperTestSupport",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // QR codes, drawn in a terminal (`sweeper web pair`).
        .target(name: "SweeperQR", swiftSettings: strict),
        .testTarget(name: "SweeperQRTests", dependencies: ["SweeperQR"], exclude: ["Fixtures"], swiftSettings: strict),
        // The daemon's command line: run by `sweeperd`, and by `sweeper`
        // when called by that name (one program installed under both names).
        .target(
            name: "SweeperDaemonCommand",
            dependencies: [
                "SweeperDaemon", "SweeperControl", "SweeperMessages", "SweeperConventions",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict,
            plugins: ["BuildCommit"]
        ),
        // Notes the git commit a build is made from, for --version.
        .plugin(name: "BuildCommit", capability: .buildTool()),
        .executableTarget(name: "sweeperd", dependencies: ["SweeperDaemonCommand"], swiftSettings: strict),

        // MARK: Terminal viewer.
        .target(name: "SweeperTUI", dependencies: ["SweeperControl", "SweeperConventions"], swiftSettings: strict),
        .testTarget(
            name: "SweeperTUITests",
            dependencies: ["SweeperTUI", "SweeperControl", "SweeperConventions"],
            swiftSettings: strict
        ),

        // MARK: Peers: encrypted transport and links between daemons.
        .target(
            name: "SweeperNet",
            dependencies: [
                "SweeperCrypto", "SweeperConventions", "SweeperEventLoop",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // What members tell each other over a link, above the transport:
        // the application messages, the versions that bring them, signed notes.
        .target(name: "SweeperMessages", dependencies: ["SweeperCrypto", "SweeperConventions"], swiftSettings: strict),
        .testTarget(name: "SweeperMessagesTests", dependencies: ["SweeperMessages", "SweeperCrypto", "SweeperConventions"], swiftSettings: strict),
        .testTarget(
            name: "SweeperNetTests",
            dependencies: [
                "SweeperNet", "SweeperMessages", "SweeperCrypto", "CSodium", "SweeperSync", "SweeperMembership", "SweeperGame", "SweeperConventions",
                "SweeperTestSupport",
            ],
            swiftSettings: strict
        ),

        // MARK: mDNS discovery over avahi-client.
        // No pkgConfig: avahi-client's cflags (-D_REENTRANT) are refused by SwiftPM;
        // its headers and libraries are in the default paths on Debian.
        .systemLibrary(name: "CAvahi", providers: [.apt(["libavahi-client-dev"])]),
        .target(
            name: "SweeperDiscovery",
            dependencies: ["CAvahi", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .testTarget(name: "SweeperDiscoveryTests", dependencies: ["SweeperDiscovery"], swiftSettings: strict),

        // MARK: The system tier: real processes, labs of network namespaces, tmux.
        // Processes (posix_spawn), the daemon harness and the network-namespace lab.
        .target(name: "SweeperTestSupport", path: "Tests/SweeperTestSupport", swiftSettings: strict),
        // Real `sweeperd` and `sweeper` processes: end to end, hostile peers and
        // clients, storage faults, several hosts found by mDNS, chaos, the viewer in tmux.
        .testTarget(
            name: "SweeperSystemTests",
            dependencies: [
                "SweeperTestSupport", "SweeperSync", "SweeperCrypto", "SweeperGame", "SweeperStore", "SweeperDiscovery",
                "SweeperMembership", "SweeperMessages", "SweeperControl", "SweeperTUI", "sweeperd", "sweeper",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),

        // MARK: Man pages, systemd unit, packaging.
        .testTarget(
            name: "SweeperPackagingTests",
            dependencies: ["sweeper", "sweeperd", "SweeperControl", "SweeperDaemon", "SweeperTestSupport"],
            swiftSettings: strict
        ),

        // MARK: Executables.
        // The one program installed: the CLI and viewer, and the daemon when
        // called `sweeperd` (a multi-call binary, as busybox is).
        .executableTarget(
            name: "sweeper",
            dependencies: [
                "SweeperGame",
                "SweeperControl",
                "SweeperConventions",
                "SweeperTUI",
                "SweeperDaemon",
                "SweeperDaemonCommand",
                "SweeperQR",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
