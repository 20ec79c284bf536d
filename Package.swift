// swift-tools-version: 6.2
//
// Sweeper: co-operative Minesweeper for a family on one network, with no server.
// One library module per concern (see ../shared/DESIGN.md §1); the executables
// `sweeper` and `sweeperd` are thin layers of argument parsing on top.

import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "Sweeper",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "sweeper", targets: ["sweeper"]),
        .executable(name: "sweeperd", targets: ["sweeperd"]),
        .library(name: "SweeperGame", targets: ["SweeperGame"]),
        .library(name: "SweeperCrypto", targets: ["SweeperCrypto"]),
        .library(name: "SweeperSync", targets: ["SweeperSync"]),
        .executable(name: "sweeper-bench-sync", targets: ["sweeper-bench-sync"]),
        // For the fuzz targets in Fuzz/ (a separate package that depends on this one).
        .library(name: "SweeperNet", targets: ["SweeperNet"]),
        .library(name: "SweeperControl", targets: ["SweeperControl"]),
        .library(name: "SweeperStore", targets: ["SweeperStore"]),
        .library(name: "SweeperDaemon", targets: ["SweeperDaemon"]),
        .library(name: "SweeperDiscovery", targets: ["SweeperDiscovery"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
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

        // MARK: Crypto and replicated state (issue 3).
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        .target(name: "SweeperCrypto", dependencies: ["CSodium"], swiftSettings: strict),
        .testTarget(name: "SweeperCryptoTests", dependencies: ["SweeperCrypto"], swiftSettings: strict),
        .target(name: "SweeperSync", dependencies: ["SweeperGame", "SweeperCrypto"], swiftSettings: strict),
        .testTarget(
            name: "SweeperSyncTests",
            dependencies: [
                "SweeperSync", "SweeperCrypto", "SweeperGame",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "sweeper-bench-sync",
            dependencies: ["SweeperSync", "SweeperCrypto", "SweeperGame"],
            swiftSettings: strict
        ),

        // MARK: Storage, control socket, daemon (issue 4).
        .target(
            name: "SweeperStore",
            dependencies: [.product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SweeperStoreTests",
            dependencies: ["SweeperStore", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict
        ),
        .target(
            name: "SweeperControl",
            dependencies: [
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
            ],
            swiftSettings: strict
        ),
        .target(
            name: "SweeperDaemon",
            dependencies: [
                "SweeperGame", "SweeperStore", "SweeperControl", "SweeperNet", "SweeperDiscovery", "SweeperSync", "SweeperCrypto",
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
                "SweeperDaemon", "SweeperControl", "SweeperStore", "SweeperSync", "SweeperCrypto", "SweeperGame",
                "sweeperd", "sweeper", "SweeperTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "sweeperd",
            dependencies: [
                "SweeperDaemon",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),

        // MARK: Terminal viewer (issue 6).
        .target(name: "SweeperTUI", dependencies: ["SweeperControl"], swiftSettings: strict),
        .testTarget(
            name: "SweeperTUITests",
            dependencies: ["SweeperTUI", "SweeperControl", "sweeperd", "sweeper", "SweeperTestSupport"],
            swiftSettings: strict
        ),

        // MARK: Peers: encrypted transport and links between daemons (issue 5).
        .target(
            name: "SweeperNet",
            dependencies: [
                "SweeperCrypto",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .testTarget(name: "SweeperNetTests", dependencies: ["SweeperNet", "SweeperCrypto"], swiftSettings: strict),

        // MARK: mDNS discovery over avahi-client (issue 5).
        // No pkgConfig: avahi-client's cflags (-D_REENTRANT) are refused by SwiftPM;
        // its headers and libraries are in the default paths on Debian.
        .systemLibrary(name: "CAvahi", providers: [.apt(["libavahi-client-dev"])]),
        .target(
            name: "SweeperDiscovery",
            dependencies: ["CAvahi", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .testTarget(name: "SweeperDiscoveryTests", dependencies: ["SweeperDiscovery", "SweeperTestSupport"], swiftSettings: strict),
        // Processes (posix_spawn) and the network-namespace lab, shared by the tests above.
        .target(name: "SweeperTestSupport", path: "Tests/SweeperTestSupport", swiftSettings: strict),
        // Scripts/bench-latency.sh: move-to-event latency between two lab hosts.
        .executableTarget(
            name: "sweeper-bench-latency",
            dependencies: ["SweeperControl", "SweeperCrypto"],
            swiftSettings: strict
        ),

        // MARK: Man pages, systemd unit, packaging (issue 8).
        .testTarget(
            name: "SweeperPackagingTests",
            dependencies: ["sweeper", "sweeperd", "SweeperControl", "SweeperDaemon", "SweeperTestSupport"],
            swiftSettings: strict
        ),

        // MARK: Executables.
        .executableTarget(name: "sweeper-bench-game", dependencies: ["SweeperGame"], swiftSettings: strict),
        .executableTarget(
            name: "sweeper",
            dependencies: [
                "SweeperGame",
                "SweeperControl",
                "SweeperTUI",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
