import Foundation
import Logging
import NIOCore
import NIOEmbedded
import NIOPosix
import SweeperControl
import SweeperConventions
import SweeperCrypto
import SweeperGame
import SweeperStore
import SweeperSync
import Testing

@testable import SweeperDaemon

/// The road a peer's ops take into the daemon, through the calls the peer
/// side makes: a sync message in a link's session goes to the game service,
/// which verifies, applies, shows (events), and writes; and back out after
/// a restart. The control router answers `show` as a client would see it.
@Suite struct RemoteOpsTests {
    /// A viewer's connection: an embedded channel made, written and read
    /// on the daemon's loop only (an embedded channel is not thread-safe),
    /// subscribed to every game.
    private func viewer(_ f: DaemonFixture) async throws -> NIOLoopBound<EmbeddedChannel> {
        let events = f.events
        return try await f.loop.submit {
            let channel = EmbeddedChannel()
            events.subscribe(game: nil).attach(channel)
            return NIOLoopBound(channel, eventLoop: f.loop)
        }.get()
    }

    /// The events written to a viewer's channel so far.
    private func events(_ viewer: NIOLoopBound<EmbeddedChannel>, _ f: DaemonFixture) async throws -> [ControlEvent] {
        try await f.loop.submit {
            var out: [ControlEvent] = []
            while let buffer = try viewer.value.readOutbound(as: ByteBuffer.self) {
                for line in Data(buffer.readableBytesView).split(separator: 0x0A) {
                    out.append(try JSONDecoder().decode(ControlEvent.self, from: line))
                }
            }
            return out
        }.get()
    }

    /// Bob, a new member of `circle`: his beginner game, made on his side.
    static func bobsGame(in circle: CircleKey) throws -> (OpAuthor, GeneratedBoard, Replica, GameID) {
        let bob = OpAuthor(identity: SigningIdentity(), circle: circle)
        let generated = try Generator.generate(try GameParameters(preset: .beginner), seed: 4)
        let genesis = try bob.genesis(
            parameters: generated.parameters, layout: generated.layout, seed: 4, questionMarks: false, createdAtMillis: 1_000)
        var replica = Replica(circle: circle)
        replica.insert(genesis)
        return (bob, generated, replica, genesis.gameID)
    }

    @Test func aPeersGameAndMovesAreCommittedShownAndSurviveARestart() async throws {
        let f = try await DaemonFixture()

        let viewer = try await viewer(f)

        // Bob, a member of the same circle, makes a game and a move on his side.
        var (bob, generated, bobReplica, game) = try Self.bobsGame(in: f.circle)
        let bobIdentity = bob.identity
        try await f.admit(bobIdentity.peerID)
        let state = try #require(bobReplica.state(of: game))
        let cells = (0..<81).filter { !state.board.isRevealed($0) && !generated.layout.isMine($0) }
        let firstCell = try #require(cells.first)
        let bobGame = try #require(bobReplica.games[game])
        let first = try #require(try bob.reveal(firstCell, in: bobGame, atMillis: 2_000))
        bobReplica.insert(first)

        // It arrives as a catch-up in the link's session.
        var session = SyncSession()
        let segments = bobReplica.segments(for: game, after: VersionVector())
        let intake = try await f.service.receive(.ops(segments), in: &session)
        #expect(intake.accepted.count == 2)
        // The write follows in a job of its own; this waits for it.
        await f.service.writeRemoteOps()
        #expect(try f.store.ops(gameID: game.description).count == 2)
        let added = try await events(viewer, f)
        #expect(added.count == 1 && added.first?.event == .gameAdded && added.first?.game == game.description)

        // A later push: one op with its own signature.
        let revealedNow = try #require(bobReplica.state(of: game))
        let next = try #require(cells.first { !revealedNow.board.isRevealed($0) })
        let bobGameNow = try #require(bobReplica.games[game])
        let second = try #require(try bob.reveal(next, in: bobGameNow, atMillis: 3_000))
        bobReplica.insert(second)
        let pushed = bobReplica.segments(for: game, after: bobGameNow.vector)
        let moved = try await f.service.receive(.ops(pushed), in: &session)
        #expect(moved.accepted.count == 1)
        let shown = try await events(viewer, f)
        #expect(shown.count == 1 && shown.first?.event == .cells && shown.first?.byPeer == bobIdentity.peerID.description)
        let g = generated.parameters.geometry
        #expect(shown.first?.cells?.contains { $0.x == g.cell(at: next).x && $0.y == g.cell(at: next).y } == true)
        // The event names the cell Bob clicked (his flood op carries it), where viewers mark his last move.
        #expect(shown.first?.x == g.cell(at: next).x && shown.first?.y == g.cell(at: next).y)

        // A duplicate changes nothing; an outsider's op is refused and never stored.
        let again = try await f.service.receive(.ops(pushed))
        #expect(again.accepted.isEmpty && again.rejected.isEmpty)
        #expect(try await events(viewer, f).isEmpty)
        let mallory = OpAuthor(identity: SigningIdentity(), circle: CircleKey())
        var malloryReplica = Replica(circle: mallory.circle)
        let fake = try mallory.genesis(
            parameters: generated.parameters, layout: generated.layout, seed: 4, questionMarks: false, createdAtMillis: 5)
        malloryReplica.insert(fake)
        let refused = try await f.service.receive(.ops(malloryReplica.segments(for: fake.gameID, after: VersionVector())), in: &session)
        #expect(refused.rejected.first?.reason == .notMember)
        #expect(try f.store.game(id: fake.gameID.description) == nil)

        let view = try await show(f.router, game.description)
        #expect(view.players.contains { $0.peer == bobIdentity.peerID.description && $0.score > 0 })
        let bobState = try #require(bobReplica.state(of: game))
        #expect(view.digest == Hex.encode(bobState.digest))

        // Restart: new layers on the same store find the same state.
        await f.service.writeRemoteOps()
        let restarted = try await DaemonFixture.daemon(store: f.store, directory: f.directory, loop: f.loop)
        let reloaded = try await show(restarted.router, game.description)
        #expect(reloaded == view.with(elapsed: reloaded.elapsedMillis))
        await restarted.network.node.shutdown()
        await f.cleanup()
    }

    @Test func aLivePushIsShownAtOnceKeptUnsignedAcrossARestartAndStoredSignedWhenItsHeadComes() async throws {
        let f = try await DaemonFixture()
        let viewer = try await viewer(f)
        var (bob, generated, bobReplica, game) = try Self.bobsGame(in: f.circle)
        let bobIdentity = bob.identity
        try await f.admit(bobIdentity.peerID)

        // The link: Bob's side pushes his own ops live; ours knows him as its peer.
        var bobSide = SyncSession()
        bobSide.liveAuthor = bobIdentity.peerID
        var ourSide = SyncSession()
        ourSide.peer = bobIdentity.peerID
        // The genesis as a catch-up, then our first summary, which lets Bob push live.
        _ = try await f.service.receive(.ops(bobReplica.segments(for: game, after: VersionVector())), in: &ourSide)
        let ours = await f.service.replica
        let summary = try #require(ourSide.start(replica: ours).first)
        _ = bobSide.receive(summary, replica: &bobReplica)
        _ = try await events(viewer, f)

        let state = try #require(bobReplica.state(of: game))
        let cell = try #require((0..<81).first { !state.board.isRevealed($0) && !generated.layout.isMine($0) })
        let bobGame = try #require(bobReplica.games[game])
        let move = try #require(try bob.reveal(cell, in: bobGame, atMillis: 2_000))
        bobReplica.insert(move)
        let pushed = bobSide.push([move], replica: bobReplica)
        guard pushed.count == 1, case .live(let live) = pushed[0], live.count == 1, live[0].signature == nil else {
            Issue.record("not one unsigned live push: \(pushed)")
            return
        }
        let intake = try await f.service.receive(pushed[0], in: &ourSide)
        #expect(intake.accepted.map(\.hash) == [move.hash] && intake.violation == nil)
        let shown = try await events(viewer, f)
        #expect(shown.first?.event == .cells && shown.first?.byPeer == bobIdentity.peerID.description)
        await f.service.writeRemoteOps()
        let rows = try f.store.ops(gameID: game.description)
        #expect(rows.count == 2 && rows.filter(\.vouched).map(\.seq) == [2])

        // A restart keeps it, unsigned, and shows the same game.
        let view = try await show(f.router, game.description)
        let restarted = try await DaemonFixture.daemon(store: f.store, directory: f.directory, loop: f.loop)
        let reloaded = try await show(restarted.router, game.description)
        #expect(reloaded.digest == view.digest)
        // It is not sent on in a catch-up: only signed runs travel.
        #expect(await restarted.service.replica.segments(for: game, after: VersionVector()).flatMap(\.ops).count == 1)

        // A new link: our side asks for the signatures it lacks, Bob's answers.
        var ourNewSide = SyncSession()
        ourNewSide.peer = bobIdentity.peerID
        let asked = ourNewSide.askForSignatures(replica: await restarted.service.replica)
        var bobNewSide = SyncSession()
        bobNewSide.liveAuthor = bobIdentity.peerID
        let answer = try #require(asked.first.map { bobNewSide.receive($0, replica: &bobReplica).replies }?.first)
        let signed = try await restarted.service.receive(answer, in: &ourNewSide)
        #expect(signed.violation == nil)
        await restarted.service.writeRemoteOps()
        let after = try f.store.ops(gameID: game.description)
        #expect(after.allSatisfy { !$0.vouched })
        #expect(try after.allSatisfy { try Op(decoding: [UInt8]($0.bytes)).signature != nil })
        #expect(await restarted.service.replica.segments(for: game, after: VersionVector()).flatMap(\.ops).count == 2)

        // A signature that is not Bob's of that op is what no honest peer sends.
        var forged = SyncSession()
        forged.peer = bobIdentity.peerID
        let fake = HeadSignature(game: .new(game), author: nil, seq: 2, signature: bobIdentity.sign([1, 2, 3]))
        let refused = try await restarted.service.receive(.heads([fake]), in: &forged)
        #expect(refused.violation != nil)
        await restarted.network.node.shutdown()
        await f.cleanup()
    }
}

extension GameView {
    /// The same view with another elapsed time (it moves with the clock while playing).
    func with(elapsed: Int) -> GameView {
        var copy = self
        copy.elapsedMillis = elapsed
        return copy
    }
}
