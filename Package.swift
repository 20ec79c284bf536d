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
        .library(name: "SweeperGame", targets: ["SweeperGame"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
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

        // MARK: Executables.
        .executableTarget(
            name: "sweeper",
            dependencies: [
                "SweeperGame",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
