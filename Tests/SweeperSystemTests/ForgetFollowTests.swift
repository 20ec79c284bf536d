import Foundation
import SweeperTestSupport
import Testing

/// A game forgotten and then followed again comes back from the peers
/// that hold it, with its played time, whoever made it: the game made on
/// this very device too.
@Suite(.serialized) struct ForgetFollowTests {
    @Test func aGameMadeHereComesBackAfterForgetAndFollow() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        try Self.forgetAndFollow(scene.game, madeBy: scene.target, forgottenBy: scene.target, peer: scene.honest)
    }

    @Test func aGameMadeByAnotherComesBackWithItsPlayedTime() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        let game = try scene.honest.newGame()
        #expect(eventually(30) { try scene.target.digests()[game] != nil }, "the game did not reach the other device")
        try Self.forgetAndFollow(game, madeBy: scene.honest, forgottenBy: scene.target, peer: scene.honest)
    }

    /// `maker` plays `game` over a second, the last move pushed live a
    /// moment ago (its head not signed yet: a player's pause signs it);
    /// `forgetter` forgets and follows it, and gets it back as `peer` holds
    /// it, played time included.
    static func forgetAndFollow(_ game: String, madeBy maker: TargetDaemon, forgottenBy forgetter: TargetDaemon, peer: TargetDaemon) throws {
        // Two moves a little over a second apart: the time between them counts.
        #expect(try maker.flagFresh(game: game))
        Thread.sleep(forTimeInterval: 1.1)
        #expect(try maker.flagFresh(game: game))
        #expect(eventually(30) { try peer.digests()[game] == forgetter.digests()[game] }, "the devices did not agree on the moves")
        let digest = try #require(try forgetter.digests()[game])
        func played(_ daemon: TargetDaemon) throws -> Int? {
            (try daemon.result(#"{"id":4,"command":"show","game":"\#(game)"}"#)["elapsedMillis"] as? Int).map { $0 / 1000 }
        }
        let time = try #require(try played(maker))
        #expect(time >= 1, "played time \(time) s: the test shows nothing of it")
        #expect(eventually(30) { try played(forgetter) == time && played(peer) == time }, "the devices did not agree on the played time")
        #expect(try forgetter.request(#"{"id":1,"command":"forget","game":"\#(game)"}"#)["ok"] as? Bool == true)
        #expect(try forgetter.digests()[game] == nil)
        #expect(try forgetter.request(#"{"id":2,"command":"follow","game":"\#(game)"}"#)["ok"] as? Bool == true)
        #expect(
            eventually(30) { try forgetter.digests()[game] == digest && played(forgetter) == time },
            "the game and its played time did not come back: \((try? played(forgetter)).flatMap { $0 } ?? -1) s; log:\n\(forgetter.log())")
    }
}
