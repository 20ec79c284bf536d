// swift-tools-version: 6.2
//
// The benchmark tools, kept apart from the product as swift-nio keeps its
// Benchmarks/: Sources/ of the main package holds only what a user runs.
// Scripts/bench.sh builds this package in release mode and runs the tools
// beside `sweeper` and `sweeperd` (built from here too, as products of the
// main package, so that one bin directory holds them all); Scripts/test.sh
// builds it so that the tools keep up with the code they measure.
//
//   swift build -c release --package-path Benchmarks

import PackageDescription

let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let sweeper: (String) -> Target.Dependency = { .product(name: $0, package: "Sweeper") }

let package = Package(
    name: "SweeperBenchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "sweeper-bench-game", targets: ["sweeper-bench-game"]),
        .executable(name: "sweeper-bench-sync", targets: ["sweeper-bench-sync"]),
        .executable(name: "sweeper-bench-membership", targets: ["sweeper-bench-membership"]),
        .executable(name: "sweeper-bench-viewer", targets: ["sweeper-bench-viewer"]),
        .executable(name: "sweeper-bench-latency", targets: ["sweeper-bench-latency"]),
    ],
    dependencies: [
        .package(name: "Sweeper", path: "..")
    ],
    targets: [
        // Generation against Tatham's Mines: boards per second, no-guess and not.
        .executableTarget(name: "sweeper-bench-game", dependencies: [sweeper("SweeperGame")], swiftSettings: strict),
        // Sync in process: deltas, merges, catch-up, the store, start-up states.
        .executableTarget(
            name: "sweeper-bench-sync",
            dependencies: [sweeper("SweeperSync"), sweeper("SweeperCrypto"), sweeper("SweeperGame"), sweeper("SweeperStore"), sweeper("SweeperDaemon")],
            swiftSettings: strict
        ),
        // Membership: a circle's records, floods of them, the cost per message.
        .executableTarget(
            name: "sweeper-bench-membership",
            dependencies: [sweeper("SweeperMembership"), sweeper("SweeperCrypto"), sweeper("SweeperSync"), sweeper("SweeperGame")],
            swiftSettings: strict
        ),
        // The text viewer's cost per move with a big board open.
        .executableTarget(name: "sweeper-bench-viewer", dependencies: [sweeper("SweeperTUI"), sweeper("SweeperControl")], swiftSettings: strict),
        // Move-to-event latency between lab hosts, over the control socket.
        .executableTarget(name: "sweeper-bench-latency", dependencies: [sweeper("SweeperControl"), sweeper("SweeperCrypto")], swiftSettings: strict),
    ]
)
