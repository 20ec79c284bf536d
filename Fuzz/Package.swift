// swift-tools-version: 6.2
//
// libFuzzer targets for every decoder that bytes from outside reach.
// A package of its own so the main package's products build as they are;
// build and run them with Scripts/fuzz.sh, which passes
// `-sanitize=fuzzer,address -parse-as-library -enable-testing` (the last
// for `@testable import` of internals such as the frame decoder).
// Each target is one file defining LLVMFuzzerTestOneInput; run with
// SWEEPER_FUZZ_SEEDS=DIR, a target writes seed inputs made by the real
// encoders into DIR and exits (Scripts/fuzz.sh --seeds refreshes Fuzz/Corpus).

import PackageDescription

let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

func fuzzTarget(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .executableTarget(name: name, dependencies: ["FuzzSupport"] + dependencies, swiftSettings: strict)
}

let sweeper: (String) -> Target.Dependency = { .product(name: $0, package: "Sweeper") }
let nio: (String) -> Target.Dependency = { .product(name: $0, package: "swift-nio") }

let package = Package(
    name: "SweeperFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Sweeper", path: ".."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .target(name: "CFuzzer"),
        .target(
            name: "FuzzSupport",
            dependencies: ["CFuzzer", sweeper("SweeperCrypto"), sweeper("SweeperSync"), sweeper("SweeperGame")],
            swiftSettings: strict),
        fuzzTarget("FuzzPeerFrames", [sweeper("SweeperNet"), sweeper("SweeperMessages"), nio("NIOCore"), nio("NIOEmbedded")]),
        fuzzTarget("FuzzHandshake", [sweeper("SweeperCrypto")]),
        fuzzTarget(
            "FuzzSecretStream",
            [sweeper("SweeperNet"), sweeper("SweeperMessages"), sweeper("SweeperCrypto"), sweeper("SweeperSync"), sweeper("SweeperMembership")]),
        fuzzTarget("FuzzOp", [sweeper("SweeperSync")]),
        fuzzTarget("FuzzSyncMessage", [sweeper("SweeperSync"), sweeper("SweeperCrypto")]),
        fuzzTarget("FuzzReplica", [sweeper("SweeperConventions"), sweeper("SweeperSync"), sweeper("SweeperCrypto"), sweeper("SweeperGame")]),
        fuzzTarget(
            "FuzzControl",
            [
                sweeper("SweeperControl"), sweeper("SweeperDaemon"), sweeper("SweeperStore"), sweeper("SweeperCrypto"), nio("NIOCore"), nio("NIOEmbedded"),
                nio("NIOPosix"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        fuzzTarget("FuzzMembership", [sweeper("SweeperMembership"), sweeper("SweeperSync"), sweeper("SweeperCrypto")]),
        fuzzTarget("FuzzInviteCode", [sweeper("SweeperCrypto"), sweeper("SweeperSync")]),
        fuzzTarget("FuzzBoardText", [sweeper("SweeperGame")]),
        fuzzTarget("FuzzConfig", [sweeper("SweeperDaemon")]),
        fuzzTarget("FuzzDiscovery", [sweeper("SweeperDaemon"), sweeper("SweeperDiscovery"), sweeper("SweeperNet"), sweeper("SweeperCrypto")]),
        fuzzTarget("FuzzWeb", [sweeper("SweeperWeb"), sweeper("SweeperControl"), nio("NIOHTTP1")]),
    ],
    swiftLanguageModes: [.v6]
)
