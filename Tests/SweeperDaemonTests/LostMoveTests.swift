import Foundation
import SweeperCrypto
import SweeperGame
import SweeperStore
import SweeperSync
import Testing

@testable import SweeperDaemon

/// A move its author pushed before keeping it (peer protocol 18), then
/// lost: the daemon that took it lets it go from memory and from its store
/// once the author says what it kept, and takes the author's next move at
/// that place without naming anyone.
@Suite struct LostMoveTests {
    /// A link of protocol 18 with Bob: his side, which pushes his moves
    /// live, and ours, which knows him as its peer.
    static func link(of bob: PeerID) -> (bobs: SyncSession, ours: SyncSession) {
        var bobs = SyncSession()
        bobs.liveAuthor = bob
        bobs.provisional = true
        var ours = SyncSession()
        ours.peer = bob
        ours.provisional = true
        return (bobs, ours)
    }

    @Test func aMoveItsAuthorLostLeavesTheStoreWhenItsAuthorSaysWhatItKept() async throws {
        let f = try await DaemonFixture()
        var (bob, generated, bobReplica, game) = try RemoteOpsTests.bobsGame(in: f.circle)
        let bobIdentity = bob.identity
        try await f.admit(bobIdentity.peerID)
        let kept = bobReplica

        // A link of protocol 18: the genesis as a catch-up, then our summary, which lets Bob push live.
        var (bobSide, ourSide) = Self.link(of: bobIdentity.peerID)
        _ = try await f.service.receive(.ops(bobReplica.segments(for: game, after: VersionVector())), in: &ourSide)
        let summary = try #require(ourSide.start(replica: await f.service.replica).first)
        _ = bobSide.receive(summary, replica: &bobReplica)

        // Bob's move goes before he keeps it; he stops before he does.
        let state = try #require(bobReplica.state(of: game))
        let cells = (0..<81).filter { !state.board.isRevealed($0) && !generated.layout.isMine($0) }
        let firstCell = try #require(cells.first)
        let bobGame = try #require(bobReplica.games[game])
        let lost = try #require(try bob.reveal(firstCell, in: bobGame, atMillis: 2_000))
        bobReplica.insert(lost)
        let pushed = bobSide.pushBeforeKeeping([lost], replica: bobReplica)
        #expect(pushed.count == 1)
        for m in pushed { _ = try await f.service.receive(m, in: &ourSide) }
        await f.service.writeRemoteOps()
        #expect(try f.store.ops(gameID: game.description).map(\.seq) == [1, 2])

        // Back up from what he kept: his summary on the new link says so.
        bobReplica = kept
        var (bobNewSide, ourNewSide) = Self.link(of: bobIdentity.peerID)
        var intake: [RemoteIntake] = []
        for m in bobNewSide.start(replica: bobReplica) { intake.append(try await f.service.receive(m, in: &ourNewSide)) }
        #expect(intake.allSatisfy { $0.violation == nil && $0.rejected.isEmpty })
        await f.service.writeRemoteOps()
        #expect(try f.store.ops(gameID: game.description).map(\.seq) == [1])
        #expect(await f.service.replica.games[game]?.chainLength(of: bobIdentity.peerID) == 1)

        // His next move takes that place, and nobody is named for two moves at one place.
        for reply in intake.flatMap(\.replies) { _ = bobNewSide.receive(reply, replica: &bobReplica) }
        let lastCell = try #require(cells.last)
        let bobGameNow = try #require(bobReplica.games[game])
        let next = try #require(try bob.reveal(lastCell, in: bobGameNow, atMillis: 3_000))
        #expect(next.seq == lost.seq && next.hash != lost.hash)
        bobReplica.insert(next)
        let moved = bobNewSide.pushBeforeKeeping([next], replica: bobReplica)
        #expect(moved.count == 1)
        for m in moved {
            let taken = try await f.service.receive(m, in: &ourNewSide)
            #expect(taken.accepted.map(\.hash) == [next.hash] && taken.rejected.isEmpty)
        }
        await f.service.writeRemoteOps()
        let rows = try f.store.ops(gameID: game.description)
        #expect(
            try rows.map { try Op(decoding: [UInt8]($0.bytes)).hash }
                == [kept.games[game]?.op(author: bobIdentity.peerID, seq: 1)?.hash, next.hash].compactMap { $0 })
        #expect(await f.service.replica.games[game]?.equivocators.isEmpty == true)
        await f.cleanup()
    }
}
