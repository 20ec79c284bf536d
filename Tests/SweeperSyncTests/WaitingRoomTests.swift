import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// Ops that wait for their predecessors or their game's genesis: a member
/// that sends ops that can never follow on fills a share of the waiting
/// list, not all of it, and a full list holds up no move that follows on.
@Suite struct WaitingRoomTests {
    let circle = Fixtures.circle(3)

    /// `count` ops of `identity` at places 2, 3, … of a game whose genesis never comes.
    func stray(_ identity: SigningIdentity, count: Int, game: UInt8) throws -> [Op] {
        let forge = Forge(circle: circle)
        let id = try #require(GameID(bytes: [UInt8](repeating: game, count: 16)))
        let previous = try #require(OpHash(bytes: [UInt8](repeating: 7, count: 32)))
        return (0..<count).map { i in
            forge.op(identity, game: id, seq: UInt64(i + 2), lamport: UInt64(i + 2), previous: previous, payload: .mark(cell: 0, mark: .flag))
        }
    }

    @Test func oneAuthorFillsAQuarterAndAFullListHoldsUpNoMoveInOrder() throws {
        var r = Replica(circle: circle, pendingLimit: 8)
        let alice = OpAuthor(identity: Fixtures.identity(1), circle: circle)
        let g = try Fixtures.genesis(by: alice)
        #expect(r.insert(g).accepted == [g])
        // One member: two of its ops wait (a quarter of 8), the third is refused.
        let mallory = Fixtures.identity(20)
        let hers = try stray(mallory, count: 3, game: 0xA1)
        #expect(r.insert(hers[0]).waiting == 1)
        #expect(r.insert(hers[1]).waiting == 1)
        let third = r.insert(hers[2])
        #expect(third.waiting == 0 && third.rejected.map(\.reason) == [.pendingLimit])
        // In another game too: her share is over every game.
        #expect(r.insert(try stray(mallory, count: 1, game: 0xA2)[0]).rejected.map(\.reason) == [.pendingLimit])
        // Three more members fill the list.
        for n in 21...23 {
            for op in try stray(Fixtures.identity(UInt64(n)), count: 2, game: UInt8(0xB0 + n)) { #expect(r.insert(op).waiting == 1) }
        }
        #expect(r.insert(try stray(Fixtures.identity(24), count: 1, game: 0xC0)[0]).rejected.map(\.reason) == [.pendingLimit])
        // A move that follows on waits nowhere: it goes in.
        let game = try #require(r.games[g.gameID])
        let state = try #require(game.state)
        let cell = try #require((0..<state.genesis.geometry.cellCount).first { !state.board.isRevealed($0) && !state.genesis.layout.isMine($0) })
        let move = try #require(try alice.reveal(cell, in: game, atMillis: 10))
        #expect(r.insert(move).accepted.map(\.hash) == [move.hash])
        // So does a segment in order.
        let next = try #require(r.games[g.gameID])
        let other = try #require(
            (0..<state.genesis.geometry.cellCount).first { !(next.state?.board.isRevealed($0) ?? true) && !state.genesis.layout.isMine($0) })
        let flag = try #require(try alice.setMark(.flag, on: other, in: next, atMillis: 11))
        #expect(r.insert(try #require(OpSegment(verifiedOps: [flag]))).accepted.map(\.hash) == [flag.hash])
    }

    @Test func waitingOpsAreBoundedInBytesToo() throws {
        var r = Replica(circle: circle)
        let forge = Forge(circle: circle)
        let mallory = Fixtures.identity(20)
        let id = try #require(GameID(bytes: [UInt8](repeating: 0xA3, count: 16)))
        let previous = try #require(OpHash(bytes: [UInt8](repeating: 7, count: 32)))
        let box = [UInt8](repeating: 0x5A, count: 1 << 20)
        var waited = 0
        var refused: OpRejection?
        for seq in 2...80 {
            let op = forge.op(mallory, game: id, seq: UInt64(seq), lamport: UInt64(seq), previous: previous, payload: .sealed(box))
            let outcome = r.insert(op)
            if let reason = outcome.rejected.first?.reason {
                refused = reason
                break
            }
            waited += outcome.waiting
        }
        // Far fewer than the ops the count allows one author: a 64 MiB room holds 63 of a megabyte.
        #expect(refused == .pendingLimit)
        #expect(waited == 63, "\(waited) ops of a megabyte waited")
        #expect(r.games[id].map { $0.pendingBytes <= Replica.pendingBytesLimit } == true)
    }
}
