import Foundation
import Logging
import SweeperControl
import SweeperCrypto
import SweeperGame
import SweeperStore
import SweeperSync
import Testing
@testable import SweeperDaemon

/// The road a peer's ops take into the daemon (what issue 5's transport
/// calls): verify, apply, commit, notify; and back out after a restart.
@Suite struct RemoteOpsTests {
    struct Fixture {
        let directory: String
        let store: Store
        let events = EventHub()
        let host: GameHost
        let circle: CircleKey

        init() throws {
            directory = NSTemporaryDirectory() + "sweeper-remote-\(UUID().uuidString)"
            store = try Store(directory: directory)
            host = try Self.host(store: store, events: events, directory: directory)
            let key = try #require(try store.circleKey())
        circle = try CircleKey(bytes: [UInt8](key))
        }

        static func host(store: Store, events: EventHub, directory: String) throws -> GameHost {
            let settings = DaemonSettings(
                stateDirectory: directory, socketPath: directory + "/c.sock", listen: [], peers: [], name: "ada", mdns: false,
                logLevel: .critical)
            return try GameHost(store: store, settings: settings, events: events, logger: Logger(label: "test")) { _ in }
        }

        func cleanup() {
            store.close()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    private func show(_ host: GameHost, _ game: String) async throws -> GameView {
        guard case .answer(let data) = await host.reply(to: Data(#"{"id":1,"command":"show","game":"\#(game)"}"#.utf8)) else {
            throw ControlError.internal("no answer")
        }
        return try JSONDecoder().decode(ResultBox<GameView>.self, from: data).result
    }

    @Test func aPeersGameAndMovesAreCommittedShownAndSurviveARestart() async throws {
        let f = try Fixture()
        defer { f.cleanup() }
        var events = f.events.subscribe(game: nil).makeAsyncIterator()

        // Bob, a member of the same circle, makes a game and a move on his side.
        let bobIdentity = SigningIdentity()
        let bob = OpAuthor(identity: bobIdentity, circle: f.circle)
        let generated = try Generator.generate(try GameParameters(preset: .beginner), seed: 4)
        let genesis = try bob.genesis(
            parameters: generated.parameters, layout: generated.layout, seed: 4, questionMarks: false, createdAtMillis: 1_000)
        var bobReplica = Replica(circle: f.circle)
        bobReplica.insert(genesis)
        let game = genesis.gameID
        let state = try #require(bobReplica.state(of: game))
        let cells = (0..<81).filter { !state.board.isRevealed($0) && !generated.layout.isMine($0) }
        let firstCell = try #require(cells.first)
        let bobGame = try #require(bobReplica.games[game])
        let first = try #require(try bob.reveal(firstCell, in: bobGame, atMillis: 2_000))
        bobReplica.insert(first)

        // It arrives as a sync message.
        var session = SyncSession()
        let segments = bobReplica.segments(for: game, after: VersionVector())
        let result = try await f.host.receive(.ops(segments), session: &session)
        #expect(result.accepted.count == 2)
        // The write follows in a job of its own; this waits for it.
        await f.host.writeRemoteOps()
        #expect(try f.store.ops(gameID: game.description).count == 2)
        let added = await events.next()
        #expect(added?.event == .gameAdded && added?.game == game.description)

        // A later push: one op with its own signature.
        let revealedNow = try #require(bobReplica.state(of: game))
        let next = try #require(cells.first { !revealedNow.board.isRevealed($0) })
        let bobGameNow = try #require(bobReplica.games[game])
        let second = try #require(try bob.reveal(next, in: bobGameNow, atMillis: 3_000))
        bobReplica.insert(second)
        let outcome = try await f.host.receive([second])
        #expect(outcome.accepted.count == 1)
        let moved = await events.next()
        #expect(moved?.event == .cells && moved?.by == bobIdentity.peerID.description)
        let g = generated.parameters.geometry
        #expect(moved?.cells?.contains { $0.x == g.cell(at: next).x && $0.y == g.cell(at: next).y } == true)

        // A duplicate changes nothing; an outsider's op is refused and never stored.
        #expect(try await f.host.receive([second]).duplicates == 1)
        let mallory = OpAuthor(identity: SigningIdentity(), circle: CircleKey())
        var malloryReplica = Replica(circle: mallory.circle)
        let fake = try mallory.genesis(
            parameters: generated.parameters, layout: generated.layout, seed: 4, questionMarks: false, createdAtMillis: 5)
        malloryReplica.insert(fake)
        #expect(try await f.host.receive([fake]).rejected.first?.reason == .notMember)
        #expect(try f.store.game(id: fake.gameID.description) == nil)

        let view = try await show(f.host, game.description)
        #expect(view.players.contains { $0.id == bobIdentity.peerID.description && $0.score > 0 })
        let bobState = try #require(bobReplica.state(of: game))
        #expect(view.digest == GameEngine.hex(bobState.digest))

        // Restart: a new host on the same store finds the same state.
        await f.host.writeRemoteOps()
        let again = try Fixture.host(store: f.store, events: EventHub(), directory: f.directory)
        let reloaded = try await show(again, game.description)
        #expect(reloaded == view.with(elapsed: reloaded.elapsedSeconds))
    }
}

extension GameView {
    /// The same view with another elapsed time (it moves with the clock while playing).
    func with(elapsed: Int) -> GameView {
        var copy = self
        copy.elapsedSeconds = elapsed
        return copy
    }
}
