import Foundation
import SweeperControl
import SweeperCrypto
import SweeperGame
import SweeperMessages
import SweeperSync
import Testing

@testable import SweeperDaemon

/// What the daemon's own parts do over time, on a clock the test moves by
/// hand: minutes of play pass in milliseconds, and nothing waits on the
/// computer's clock.
@Suite struct ClockedTests {
    /// A viewer: presence knows each by its identity.
    private final class Viewer {}

    /// Moves the clock on by `seconds`, in the presence service's own
    /// steps, ticking it after each as its loop would.
    private static func pass(_ seconds: Double, _ clock: ManualClock, _ f: DaemonFixture) {
        for _ in 0..<Int(seconds / PresenceService.tickInterval.seconds) {
            clock.advance(by: PresenceService.tickInterval)
            f.core.presence.tick()
        }
    }

    private static func played(_ f: DaemonFixture, _ game: String) async throws -> Int {
        try await show(f.router, game).elapsedMillis / 1000
    }

    /// A daemon on a clock the test moves, with a new beginner game of
    /// `seed` and a spot in it for a viewer's cursor.
    private static func daemonWithGame(seed: Int) async throws -> (ManualClock, DaemonFixture, game: String, spot: PresenceSpot) {
        let clock = ManualClock()
        let f = try await DaemonFixture(clock: clock)
        let opened: GameView = try await result(f.router, #"{"id":1,"command":"new","preset":"beginner","seed":\#(seed)}"#)
        let id = try #require(GameID(hex: opened.game))
        return (clock, f, opened.game, try #require(PresenceSpot(game: id.bytes, x: 2, y: 3)))
    }

    /// A game nobody opens gains no time; one a viewer shows for 3 s gains
    /// 3, and nothing once the viewer closes.
    @Test func aGameCountsOnlyWhileAViewerShowsIt() async throws {
        let (clock, f, game, spot) = try await Self.daemonWithGame(seed: 5)
        Self.pass(20, clock, f)
        #expect(try await Self.played(f, game) == 0, "a game nobody opened gained time")

        let viewer = Viewer()
        f.core.presence.setCursor(spot, viewer: ObjectIdentifier(viewer))
        Self.pass(3, clock, f)
        f.core.presence.viewerClosed(ObjectIdentifier(viewer))
        #expect(try await Self.played(f, game) == 3)
        Self.pass(2, clock, f)
        #expect(try await Self.played(f, game) == 3, "the time went on after the viewer closed")
        await f.cleanup()
    }

    /// A game whose creator (another device) chose its players, this
    /// device not among them: watching it alone adds no time, from the
    /// moment it arrives (not only after a restart).
    @Test func watchingAnotherPlayersGameAloneAddsNoTime() async throws {
        let clock = ManualClock()
        let f = try await DaemonFixture(clock: clock)
        let bob = OpAuthor(identity: SigningIdentity(), circle: f.circle)
        try await f.admit(bob.identity.peerID)
        let board = try Generator.generate(try GameParameters(preset: .beginner), seed: 8)
        let genesis = try bob.genesis(
            parameters: board.parameters, layout: board.layout, seed: 8, questionMarks: false,
            // Made after this store began counting played time (a game from before falls back to its wall-clock age).
            createdAtMillis: UInt64(Date().timeIntervalSince1970 * 1000) + 60_000,
            players: [bob.identity.peerID, SigningIdentity().peerID])
        let taken = try await f.service.receive(.ops([try #require(OpSegment(verifiedOps: [genesis]))]))
        #expect(taken.accepted.count == 1)
        let viewer = Viewer()
        f.core.presence.setCursor(PresenceSpot(game: genesis.gameID.bytes, x: 2, y: 3), viewer: ObjectIdentifier(viewer))
        Self.pass(5, clock, f)
        f.core.presence.viewerClosed(ObjectIdentifier(viewer))
        let watched = try await Self.played(f, genesis.gameID.description)
        #expect(watched == 0, "a spectator watching alone added \(watched) s")
        // The attempt happens: the same viewer on a game of its own counts.
        let (ownClock, g, own, spot) = try await Self.daemonWithGame(seed: 9)
        g.core.presence.setCursor(spot, viewer: ObjectIdentifier(viewer))
        Self.pass(3, ownClock, g)
        #expect(try await Self.played(g, own) == 3)
        await g.cleanup()
        await f.cleanup()
    }

    /// A viewer left alone for five minutes stops counting and its player
    /// shows as looking nowhere, until its next key.
    @Test func anIdleViewerStopsCountingAndShowingUntilItsNextKey() async throws {
        let (clock, f, game, spot) = try await Self.daemonWithGame(seed: 6)
        let viewer = Viewer()
        f.core.presence.setCursor(spot, viewer: ObjectIdentifier(viewer))
        #expect(f.core.presence.everyone().first?.own == true)

        Self.pass(PlayLedger.idleLimit + 60, clock, f)
        #expect(try await Self.played(f, game) == Int(PlayLedger.idleLimit))
        #expect(f.core.presence.everyone().isEmpty, "an idle player still shows as looking at the game")

        f.core.presence.setCursor(spot, viewer: ObjectIdentifier(viewer))
        Self.pass(10, clock, f)
        #expect(try await Self.played(f, game) == Int(PlayLedger.idleLimit) + 10)
        #expect(f.core.presence.everyone().first?.own == true)
        await f.cleanup()
    }
}
