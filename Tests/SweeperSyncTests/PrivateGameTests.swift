import SweeperConventions
import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// Private games: their ops are sealed with a key only the players hold;
/// the other members keep and relay them without reading them.
@Suite struct PrivateGameTests {
    let circle = Fixtures.circle(29)
    let creatorID = Fixtures.identity(1)
    let playerID = Fixtures.identity(2)
    let outsiderID = Fixtures.identity(3)
    var creator: OpAuthor { OpAuthor(identity: creatorID, circle: circle) }
    var player: OpAuthor { OpAuthor(identity: playerID, circle: circle) }
    var outsider: OpAuthor { OpAuthor(identity: outsiderID, circle: circle) }
    let clock: UInt64 = 1_790_000_001_000

    func genesis() throws -> (Op, Genesis) {
        let (p, l) = try Fixtures.layout(width: 9, height: 9, mines: 10, seed: 5)
        let op = try creator.privateGenesis(
            parameters: p, layout: l, seed: 5, questionMarks: false, createdAtMillis: clock, players: [playerID.peerID])
        let open = try Genesis(parameters: p, layout: l, questionMarks: false, seed: 5, createdAtMillis: clock, players: [playerID.peerID])
        return (op, open)
    }

    /// Replicas of the creator, the player and a member who does not play, holding the genesis.
    func replicas(_ g: Op) -> [Replica] {
        [creatorID, playerID, outsiderID].map { id in
            var r = Replica(circle: circle, reader: id)
            r.insert(g)
            return r
        }
    }

    func held(_ r: Replica, _ id: GameID) throws -> GameReplica { try #require(r.games[id]) }

    func safeCell(_ state: GameState, _ k: Int = 0) -> Int {
        (0..<state.genesis.geometry.cellCount).filter { !state.board.isRevealed($0) && !state.genesis.layout.isMine($0) }[k]
    }

    @Test func playersReadTheGameAndTheOthersRelayItUnread() throws {
        let (g, open) = try genesis()
        var rs = replicas(g)
        let id = g.gameID
        // Everyone holds and would relay it; only the players read it.
        for r in rs { #expect(r.summary[id] == VersionVector(heads: [creatorID.peerID: 1])) }
        let state = try #require(rs[1].state(of: id))
        #expect(state.isPrivate && state.genesis.layout == open.layout)
        #expect(rs[0].state(of: id)?.digest == state.digest)
        #expect(rs[2].state(of: id) == nil && rs[2].games[id]?.privateHeader?.key == nil)
        #expect(rs[2].games[id]?.privateHeader?.players == [creatorID.peerID, playerID.peerID])
        // The layout is nowhere in the op's bytes.
        let (_, layoutBytes) = Genesis.encodeLayout(open.layout)
        #expect(!g.encoded.contains(layoutBytes))

        // The player's reveal is sealed; the outsider takes it, unread.
        let move = try #require(try player.reveal(safeCell(state), in: try held(rs[1], id), atMillis: clock + 1))
        guard case .sealed = move.payload else {
            Issue.record("a private game's move is not sealed: \(move.payload.kind)")
            return
        }
        for i in rs.indices { #expect(rs[i].insert(move).accepted == [move]) }
        #expect(rs[0].state(of: id)?.digest == rs[1].state(of: id)?.digest)
        #expect(rs[1].state(of: id)?.digest != state.digest)
        #expect(rs[2].games[id]?.opCount == 2 && rs[2].state(of: id) == nil)
        // A replica with no reader restores it from stored ops, as held.
        var restored = Replica(circle: circle, reader: playerID)
        restored.restore(try held(rs[1], id).allOps())
        #expect(restored.state(of: id)?.digest == rs[1].state(of: id)?.digest)
    }

    @Test func outsidersAndPlainOpsAreRefusedAndJunkChangesNothing() throws {
        let (g, _) = try genesis()
        var rs = replicas(g)
        let id = g.gameID
        let state = try #require(rs[1].state(of: id))
        // A member who does not play cannot move, whatever it sends.
        let key = try #require(rs[1].games[id]?.privateHeader?.key)
        var w = ByteWriter()
        OpPayload.reveal(CellRuns(cells: [safeCell(state)])).encode(into: &w)
        let intruder = outsider.make(.sealed(key.seal(w.bytes)), in: try held(rs[2], id), atMillis: clock)
        // A player's plain op would tell everyone the move.
        let plain = Op(
            signing: playerID, circle: circle, gameID: id, seq: 1, lamport: 2, previous: .none, wallClockMillis: clock,
            payload: .reveal(CellRuns(cells: [safeCell(state)])))
        for i in rs.indices {
            #expect(rs[i].insert(intruder).rejection(of: intruder) == .notPlayer)
            #expect(rs[i].insert(plain).rejection(of: plain) == .notPlayer)
        }
        // A player's sealed junk, or a cell off the board: kept everywhere, no effect.
        let before = try #require(rs[1].state(of: id)?.digest)
        var off = ByteWriter()
        OpPayload.mark(cell: 81, mark: .flag).encode(into: &off)
        let junk = Op(
            signing: playerID, circle: circle, gameID: id, seq: 1, lamport: 2, previous: .none, wallClockMillis: clock,
            payload: .sealed(key.seal([0xFF, 1, 2])))
        let offBoard = Op(
            signing: playerID, circle: circle, gameID: id, seq: 2, lamport: 3, previous: junk.hash, wallClockMillis: clock,
            payload: .sealed(key.seal(off.bytes)))
        for i in rs.indices {
            #expect(rs[i].insert(junk).accepted == [junk])
            #expect(rs[i].insert(offBoard).accepted == [offBoard])
        }
        #expect(rs[1].state(of: id)?.digest == before && rs[0].state(of: id)?.digest == before)
    }

    @Test func anAddedPlayerGetsTheKeyAndReadsEverythingBefore() throws {
        let (g, _) = try genesis()
        var rs = replicas(g)
        let id = g.gameID
        let state = try #require(rs[1].state(of: id))
        let move = try #require(try player.reveal(safeCell(state), in: try held(rs[1], id), atMillis: clock + 1))
        for i in rs.indices { rs[i].insert(move) }
        let add = try #require(try creator.addPlayers([outsiderID.peerID], in: try held(rs[0], id), atMillis: clock + 2))
        guard case .privatePlayers(let keys) = add.payload else {
            Issue.record("not a private players op: \(add.payload.kind)")
            return
        }
        #expect(keys.map(\.player) == [outsiderID.peerID])
        for i in rs.indices { #expect(rs[i].insert(add).accepted == [add]) }
        let now = try #require(rs[0].state(of: id))
        #expect(rs[2].state(of: id)?.digest == now.digest, "the added player reads the game, its earlier moves included")
        #expect(now.players == [creatorID.peerID, playerID.peerID, outsiderID.peerID])
        // And moves in it, sealed.
        let third = try #require(try outsider.reveal(safeCell(now), in: try held(rs[2], id), atMillis: clock + 3))
        for i in rs.indices { #expect(rs[i].insert(third).accepted == [third]) }
        #expect(Set(rs.map { $0.state(of: id)?.digest ?? [] }).count == 1)
        // Only the creator adds players, and never with a plain players op.
        let plainAdd = creator.make(.players([Fixtures.identity(9).peerID]), in: try held(rs[2], id), atMillis: clock)
        #expect(rs[0].insert(plainAdd).rejection(of: plainAdd) == .notPlayer)
    }

    @Test func removingAnAuthorRederivesAPrivateGame() throws {
        let (g, _) = try genesis()
        var rs = replicas(g)
        let id = g.gameID
        let add = try #require(try creator.addPlayers([outsiderID.peerID], in: try held(rs[0], id), atMillis: clock + 2))
        for i in rs.indices { rs[i].insert(add) }
        let state = try #require(rs[2].state(of: id))
        let move = try #require(try outsider.reveal(safeCell(state), in: try held(rs[2], id), atMillis: clock + 3))
        for i in rs.indices { rs[i].insert(move) }
        let digest = rs[1].state(of: id)?.digest
        for i in rs.indices { rs[i].remove(outsiderID.peerID, kept: [:]) }
        #expect(rs[1].state(of: id)?.digest != digest)
        #expect(rs[2].state(of: id) != nil, "the key came with the creator's op, which stays")
        #expect(Set(rs.map { $0.state(of: id)?.digest ?? [] }).count == 1)
    }
}
