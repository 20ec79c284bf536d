import Foundation
import SweeperTestSupport
import Testing

/// `Scripts/check.sh`, the house rules a script checks: this repository
/// keeps them, and a tree that breaks each one is refused with a line
/// naming the file and the rule.
@Suite struct HouseRulesTests {
    static let script = "\(repositoryRoot)/Scripts/check.sh"

    @Test func thisRepositoryKeepsTheHouseRules() throws {
        let outcome = try runProcess(["/bin/bash", Self.script, repositoryRoot])
        #expect(outcome.status == 0, "Scripts/check.sh found broken rules:\n\(outcome.stderr)")
    }

    @Test func aTreeThatBreaksEachRuleIsRefusedWithALineForEach() throws {
        let root = NSTemporaryDirectory() + "sweeper-house-rules-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: root) }
        func write(_ path: String, _ text: String) throws {
            let full = root + "/" + path
            try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: full, atomically: true, encoding: .utf8)
        }
        // Within every rule first: the script passes.
        try write(".swift-format", String(contentsOfFile: "\(repositoryRoot)/.swift-format", encoding: .utf8))
        try write("Sources/SweeperGame/Small.swift", String(repeating: "let a = 1\n", count: 600))
        try write("Sources/SweeperDaemon/Control/Router.swift", "import SweeperControl\n")
        try write("Sources/SweeperDaemon/System/DaemonClock.swift", "let now = Date()\n")
        try write("Sources/SweeperDaemon/Games/Engine.swift", "actor GameService {}\n")
        try write("Sources/SweeperDaemon/Peers/Inbox.swift", "final class PeerInbox {\n    let service: GameService? = nil\n}\n")
        try write("Tests/Fine.swift", "stopProcess(pid)\nwhile !ready() { usleep(50_000) }\n")
        try write("Sources/SweeperSync/Op.swift", "public enum OpPayload {\n    case reveal(Int)\n}\n")
        try write("Sources/SweeperStore/Store.swift", "import FoundationEssentials\n")
        try write("Sources/SweeperNet/Held.swift", "let a = Mutex<[@Sendable () -> Void]>([])\nlet b = Mutex<Receiver>(Receiver())\n")
        try write("Sources/SweeperSync/SweeperSync.docc/SweeperSync.md", "# Ops\n\n- ``OpPayload/reveal(_:)``: opens cells.\n")
        try write("Sources/SweeperMessages/PeerMessage.swift", "public static let presenceVersion: UInt8 = 3\nlet ok = protocolVersion >= 3\n")
        let clean = try runProcess(["/bin/bash", Self.script, root])
        #expect(clean.status == 0, "a tree within the rules was refused:\n\(clean.stderr)")
        // Then one break of each rule.
        try write("Sources/SweeperGame/Big.swift", String(repeating: "let a = 1\n", count: 601))
        try write("Sources/SweeperDaemon/Games/Service.swift", "import SweeperControl\nlet t = Date()\n")
        try write("Tests/Lab.sh", "pkill -f sweeperd\n")
        try write("Sources/SweeperNet/Frame.swift", "let n = try! decode()\n")
        try write("Sources/SweeperStore/Rows.swift", "import Foundation\n")
        try write("Sources/SweeperNet/Lent.swift", "let r = Mutex<(receive: (@Sendable (Int) -> Void)?, on: Bool)>((nil, false))\n")
        try write("Sources/SweeperControl/Views.swift", "if protocolVersion < 3 { old() }\n")
        try write("Sources/SweeperSync/Op.swift", "public enum OpPayload {\n    case reveal(Int)\n    indirect case flood(Int)\n}\n")
        try write("Sources/SweeperGame/SweeperGame.docc/SweeperGame.md", "import SweeperConventions\n\n# ``SweeperGame``\n")
        try write("Tests/Slow.swift", "Thread.sleep(forTimeInterval: 1.5)\nusleep(200_000)\n")
        try write("Sources/SweeperGame/Ugly.swift", "func f() {\n  return\n}\n")
        try write("Sources/SweeperDaemon/Games/Clock.swift", "let inbox: PeerInbox? = nil  // not a PeerNetwork\n")
        // Two files within their own budgets, but together past 5 s of sleeping.
        try write("Scripts/check-budgets.txt", "sleep Tests/LongA.swift 2.5\nsleep Tests/LongB.swift 2.5\n")
        try write("Tests/LongA.swift", "Thread.sleep(forTimeInterval: 2.5)\n")
        try write("Tests/LongB.swift", "Thread.sleep(forTimeInterval: 2.5)\n")
        let broken = try runProcess(["/bin/bash", Self.script, root])
        #expect(broken.status == 1)
        let lines = broken.stderr.split(separator: "\n").map(String.init)
        for (file, rule) in [
            ("Sources/SweeperGame/Big.swift", "601 lines"), ("Sources/SweeperDaemon/Games/Service.swift", "imports SweeperControl"),
            ("Sources/SweeperDaemon/Games/Service.swift", "reads the time directly"), ("Tests/Lab.sh", "by name"),
            ("Sources/SweeperNet/Frame.swift", "crashes"), ("Sources/SweeperStore/Rows.swift:1", "imports Foundation"),
            ("Sources/SweeperNet/Lent.swift:1", "closure directly as a lock's value"),
            ("Sources/SweeperControl/Views.swift", "peer protocol version"),
            ("Tests/Slow.swift", "sleeps 1.700 s"), ("SweeperSync.docc/SweeperSync.md", "op kind flood"),
            ("Sources/SweeperGame/SweeperGame.docc/SweeperGame.md:1", "outside a code block"),
            ("the tests sleep 6.750 s", "in all"),
            ("Sources/SweeperGame/Ugly.swift:2", "not as swift-format writes it: [Indentation]"),
            ("Sources/SweeperDaemon/Games/Clock.swift:1", "names PeerInbox of Peers, a layer above Games/"),
        ] {
            #expect(lines.contains { $0.contains(file) && $0.contains(rule) }, "no line for \(file) (\(rule)):\n\(broken.stderr)")
        }
        #expect(
            !lines.contains {
                $0.contains("Small.swift") || $0.contains("Router.swift") || $0.contains("Engine.swift") || $0.contains("Inbox.swift")
                    || $0.contains("Store/Store.swift") || $0.contains("System/DaemonClock.swift")
                    || $0.contains("Fine.swift") || $0.contains("Held.swift")
                    || $0.contains("PeerMessage.swift") || $0.contains("LongA.swift") || $0.contains("LongB.swift")
            })
    }
}
