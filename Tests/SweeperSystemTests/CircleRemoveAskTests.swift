import Foundation
import SweeperTestSupport
import Testing

/// `circle remove` says a device may not remove before it asks for a yes
/// (or, without a terminal, for `--yes`), and names what would go.
@Suite(.serialized) struct CircleRemoveAskTests {
    @Test func aMemberIsToldItMayNotBeforeItIsAskedForYes() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        // The honest device joined as a plain member: it may remove nobody.
        let asked = try runProcess(
            [TestDaemons.sweeper, "--socket", scene.honest.socketPath, "circle", "remove", "ann"],
            environment: scene.honest.environment)
        #expect(asked.status != 0)
        #expect(!asked.stderr.contains("--yes") && asked.stderr.contains("sweeper: "), "\(asked.stderr)")
        print("a member asked: \(asked.stderr)")
        #expect(scene.target.linkedPeers() == 1, "something was removed")
        // The founder may: without a terminal it is told to add --yes, and nothing is removed yet.
        let founder = try runProcess(
            [TestDaemons.sweeper, "--socket", scene.target.socketPath, "circle", "remove", "bob"],
            environment: scene.target.environment)
        #expect(founder.status != 0 && founder.stderr.contains("add --yes"), "\(founder.stderr)")
        let members = try scene.target.result(#"{"id":1,"command":"circle"}"#)["members"] as? [[String: Any]] ?? []
        #expect(members.count == 2, "the member went without a yes")
    }
}
