import SweeperConventions
import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// Games whose creator chose the players: spectators' ops are refused by
/// every replica the same way, the creator alone adds players, and the
/// archive flag is a last-writer-wins register.
@Suite struct RolesTests {
    let circle = Fixtures.circle(17)
    var creator: OpAuthor { OpAuthor(identity: Fixtures.identity(1), circle: circle) }
    var player: OpAuthor { OpAuthor(identity: Fixtures.identity(2), circle: circle) }
    var spectator: OpAuthor { OpAuthor(identity: Fixtures.identity(3), circle: circle) }
    let clock: UInt64 = 1_790_000_000_500

    /// A replica holding a game of the creator and `player` only.
    func restrictedGame() throws -> (Replica, GameID) {
        var r = Replica(circle: circle)
        let g = try Fixtures.genesis(by: creator, players: [player.identity.peerID])
        #expect(r.insert(g).accepted == [g])
        return (r, g.gameID)
    }

    func held(_ r: Replica, _ id: GameID) throws -> GameReplica { try #require(r.games[id]) }

    func safeCell(_ state: GameState, _ k: Int = 0) -> Int {
        (0..<state.genesis.geometry.cellCount).filter { !state.board.isRevealed($0) && !state.genesis.layout.isMine($0) }[k]
    }

    @Test func theGenesisCarriesThePlayersAndTheGameIDCoversThem() throws {
        let open = try Fixtures.genesis(by: creator)
        let chosen = try Fixtures.genesis(by: creator, players: [player.identity.peerID])
        #expect(open.gameID != chosen.gameID)
        let decoded = try Op(decoding: chosen.encoded)
        guard case .genesis(let g) = decoded.payload else {
            Issue.record("not a genesis")
            return
        }
        #expect(g.players == [player.identity.peerID])
        #expect(g.gameID(creator: creator.identity.peerID) == chosen.gameID)
        // The creator is never listed: it always plays.
        let withSelf = try Fixtures.genesis(by: creator, players: [creator.identity.peerID, player.identity.peerID])
        #expect(withSelf.gameID == chosen.gameID)
    }

    @Test func aSpectatorsMoveIsRefusedAndAPlayersAccepted() throws {
        var (r, id) = try restrictedGame()
        let state = try #require(r.state(of: id))
        #expect(state.mayMove(creator.identity.peerID) && state.mayMove(player.identity.peerID))
        #expect(!state.mayMove(spectator.identity.peerID))
        // The spectator's own author refuses to make the op …
        #expect(throws: MoveError.notAPlayer) { try spectator.reveal(safeCell(state), in: r.games[id]!, atMillis: clock) }
        // Every way of making a move asks (revealing given cells too, which the fuzzer found unchecked).
        #expect(throws: MoveError.notAPlayer) { try spectator.reveal(cells: [safeCell(state)], in: r.games[id]!, atMillis: clock) }
        #expect(throws: MoveError.notAPlayer) { try spectator.cycleMark(safeCell(state), in: r.games[id]!, atMillis: clock) }
        #expect(throws: MoveError.notAPlayer) { try spectator.peek(in: r.games[id]!, atMillis: clock) }
        // … and a replica refuses one made anyway.
        let forged = spectator.make(.reveal(CellRuns(cells: [safeCell(state)])), in: try held(r, id), atMillis: clock)
        #expect(r.insert(forged).rejection(of: forged) == .notPlayer)
        #expect(r.rejectionCounts[.notPlayer] == 1)
        let move = try #require(try player.reveal(safeCell(state), in: try held(r, id), atMillis: clock))
        #expect(r.insert(move).accepted == [move])
    }

    @Test func onlyTheCreatorAddsPlayersAndAddedPlayersMayMove() throws {
        var (r, id) = try restrictedGame()
        let state = try #require(r.state(of: id))
        #expect(throws: MoveError.notTheCreator) { try player.addPlayers([spectator.identity.peerID], in: r.games[id]!, atMillis: clock) }
        let selfAdd = player.make(.players([player.identity.peerID]), in: try held(r, id), atMillis: clock)
        #expect(r.insert(selfAdd).rejection(of: selfAdd) == .notPlayer)

        // A move of the spectator made where it was added already, arriving
        // before the add op: refused now, accepted when offered again after.
        var elsewhere = r
        let add = try #require(try creator.addPlayers([spectator.identity.peerID], in: try held(r, id), atMillis: clock))
        #expect(elsewhere.insert(add).accepted == [add])
        let move = try #require(try spectator.reveal(safeCell(state), in: try held(elsewhere, id), atMillis: clock))
        #expect(elsewhere.insert(move).accepted == [move])
        #expect(r.insert(move).rejection(of: move) == .notPlayer)
        #expect(r.insert(add).accepted == [add])
        #expect(r.insert(move).accepted == [move])
        #expect(r.state(of: id)?.digest == elsewhere.state(of: id)?.digest)
        #expect(r.state(of: id)?.players == Set([creator, player, spectator].map(\.identity.peerID)))
        // Adding them again makes no op.
        #expect(try creator.addPlayers([spectator.identity.peerID], in: try held(r, id), atMillis: clock) == nil)
    }

    @Test func anOpenGameHasNoPlayersToAdd() throws {
        var r = Replica(circle: circle)
        let g = try Fixtures.genesis(by: creator)
        r.insert(g)
        let game = try held(r, g.gameID)
        #expect(throws: MoveError.everyoneMayPlay) { try creator.addPlayers([spectator.identity.peerID], in: game, atMillis: clock) }
        let forced = creator.make(.players([spectator.identity.peerID]), in: game, atMillis: clock)
        #expect(r.insert(forced).rejection(of: forced) == .notPlayer)
        #expect(r.state(of: g.gameID)?.mayMove(spectator.identity.peerID) == true)
    }

    @Test func theArchiveFlagIsTheLastWritersInAnyOrder() throws {
        let (base, id) = try restrictedGame()
        let game = try #require(base.games[id])
        let archive = try #require(try creator.archive(true, in: game, atMillis: clock))
        // Made concurrently (same Lamport time): the greater author key wins.
        let restore = player.make(.archive(false), in: game, atMillis: clock)
        #expect(archive.lamport == restore.lamport)
        var a = base
        var b = base
        a.insert(archive)
        a.insert(restore)
        b.insert(restore)
        b.insert(archive)
        let expected = creator.identity.peerID < player.identity.peerID ? false : true
        #expect(a.state(of: id)?.isArchived == expected)
        #expect(b.state(of: id)?.isArchived == expected)
        #expect(a.state(of: id)?.digest == b.state(of: id)?.digest)
        // The spectator may not archive.
        #expect(throws: MoveError.notAPlayer) { try spectator.archive(true, in: game, atMillis: clock) }
    }

    @Test func rolesChangeTheDigestOnlyOfGamesThatUseThem() throws {
        var r = Replica(circle: circle)
        let g = try Fixtures.genesis(by: creator)
        r.insert(g)
        let before = try #require(r.state(of: g.gameID)?.digest)
        #expect(r.state(of: g.gameID)?.usesRoles == false)
        let archive = try #require(try creator.archive(true, in: try held(r, g.gameID), atMillis: clock))
        r.insert(archive)
        #expect(r.state(of: g.gameID)?.usesRoles == true)
        #expect(r.state(of: g.gameID)?.digest != before)
    }

    @Test func badPlayerListsDoNotDecode() throws {
        let (r, id) = try restrictedGame()
        let game = try held(r, id)
        let good = creator.make(.players([spectator.identity.peerID]), in: game, atMillis: clock).encoded
        #expect(try Op(decoding: good).payload == .players([spectator.identity.peerID]))
        // The payload sits just before the signature flag and signature:
        // kind (1) ‖ count (1) ‖ key (32) ‖ flag (1) ‖ signature (64).
        let countAt = good.count - 64 - 1 - 32 - 1
        #expect(good[countAt - 1] == OpPayload.Kind.players.rawValue)
        var empty = good
        empty.replaceSubrange(countAt..<(countAt + 33), with: [0])
        #expect(throws: ByteDecodingError.valueOutOfRange(field: "player count", value: 0)) { try Op(decoding: empty) }
        // Two keys out of order.
        var twice = good
        let key = Array(good[(countAt + 1)..<(countAt + 33)])
        let smaller = [UInt8](repeating: 0, count: 32)
        twice.replaceSubrange(countAt..<(countAt + 33), with: [2] + key + smaller)
        #expect(throws: ByteDecodingError.unordered(field: "players")) { try Op(decoding: twice) }
        var archive = creator.make(.archive(true), in: game, atMillis: clock).encoded
        archive[archive.count - 64 - 1 - 1] = 2
        #expect(throws: ByteDecodingError.unknownKind(field: "archived", value: 2)) { try Op(decoding: archive) }
    }

    @Test func aPeerTooOldToReadRolesIsNotSentGamesThatUseThem() throws {
        var (r, restricted) = try restrictedGame()
        let open = try Fixtures.genesis(by: creator, seed: 2)
        r.insert(open)
        var session = SyncSession()
        session.peerReads.remove(.roles)
        var sent = Set<GameID>()
        let step = session.receive(.summary([:], wantsReply: false), replica: &r)
        for case .ops(let segments) in step.replies { for s in segments { sent.formUnion(s.ops.map(\.gameID)) } }
        #expect(sent == [open.gameID])
        // Pushes skip it too; a peer that reads roles gets both.
        let move = try #require(try player.reveal(safeCell(r.state(of: restricted)!), in: try held(r, restricted), atMillis: clock))
        r.insert(move)
        #expect(session.push([move], replica: r).isEmpty)
        var current = SyncSession()
        let all = current.receive(.summary([:], wantsReply: false), replica: &r)
        var both = Set<GameID>()
        for case .ops(let segments) in all.replies { for s in segments { both.formUnion(s.ops.map(\.gameID)) } }
        #expect(both == [open.gameID, restricted])
    }
}
