import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// Nothing a peer sends makes a replica rebuild a sleeping game before it
/// knows the sender may write and the signature is the author's: a holder
/// of the circle key who was never admitted, or a member with a forged
/// signature, costs a signature check, never a game read back from the store.
@Suite struct CheckBeforeWakingTests {
    let circle = Fixtures.circle(7)
    let alice = Fixtures.identity(1)
    let bob = Fixtures.identity(2)
    /// Holds the circle key (its ops carry a valid proof) but no admission names it.
    let outsider = Fixtures.identity(9)

    /// Six games, each with Bob's flag ops, all asleep; only Alice and Bob write.
    func sleepingGames() throws -> (Replica, Simulation.SimulatedDisk, [GameID]) {
        var ops: [Op] = []
        for seed in 1...6 {
            let (genesis, run) = try Fixtures.flagRun(in: circle, seed: UInt64(seed), moves: 4)
            ops += [genesis] + run
        }
        var (replica, disk) = Simulation.SimulatedDisk.replica(of: ops, circle: circle, keepingRecent: 2)
        replica.admitAuthors([alice.peerID, bob.peerID])
        let ids = replica.knownGames.sorted()
        for id in ids { replica.sleep(id) }
        #expect(replica.sleeping.count == 6 && replica.games.isEmpty)
        return (replica, disk, ids)
    }

    @Test func opsSegmentsAndHeadsOfThoseWhoMayNotWriteWakeNothing() throws {
        var (replica, disk, ids) = try sleepingGames()
        let forge = Forge(circle: circle)
        var heads: [GameID: OpHash] = [:]
        for id in ids {
            let head = try #require(replica.hash(in: id, author: bob.peerID, seq: 4))
            heads[id] = head
        }
        let read = disk.opsReadBack
        for id in ids {
            // The outsider's own op, validly signed.
            let own = forge.op(outsider, game: id, seq: 1, lamport: 50, previous: .none, payload: .mark(cell: 0, mark: .flag))
            #expect(replica.insert(own).rejected.map(\.reason) == [.notMember])
            #expect(replica.insert(vouched: own).rejected.map(\.reason) == [.notMember])
            // Bob's next op, signed by the outsider.
            let previous = try #require(heads[id])
            let forged = forge.op(outsider, game: id, seq: 5, lamport: 60, previous: previous, payload: .mark(cell: 1, mark: .flag), author: bob.peerID)
            #expect(replica.insert(forged).rejected.map(\.reason) == [.badSignature])
            if let segment = OpSegment(verifiedOps: [forged]) {
                #expect(replica.insert(segment).rejected.map(\.reason) == [.badSignature])
            }
            // A head signature for a chain the game holds signed already.
            var session = SyncSession()
            session.peer = outsider.peerID
            let head = HeadSignature(game: .new(id), author: bob.peerID, seq: 4, signature: outsider.sign([1, 2, 3]))
            _ = session.receive(.heads([head]), replica: &replica)
        }
        #expect(replica.sleeping.count == 6 && replica.games.isEmpty, "a game woke for a sender that may not write")
        // At most the one op a head signature names was read back (to check
        // it as an awake game would): never a game's ops (five each here).
        #expect(disk.opsReadBack - read <= ids.count)
        #expect(replica.rejectionCounts[.badSignature, default: 0] >= 2 * ids.count)
        // The attempt happens: Bob's own next op wakes its game and goes in.
        let id = ids[0]
        let previous = try #require(heads[id])
        let honest = forge.op(bob, game: id, seq: 5, lamport: 60, previous: previous, payload: .mark(cell: 1, mark: .flag))
        #expect(replica.insert(honest).accepted.count == 1)
        #expect(replica.games[id] != nil && disk.opsReadBack > read)
    }

    /// A peer asks for the signatures of chains it holds unsigned: at most
    /// ``SyncSession/unsignedLimit`` ops are read for one message, however
    /// many it names.
    @Test func askingForSignaturesReadsOnlySoMany() throws {
        var (replica, disk, ids) = try sleepingGames()
        let chains = (0..<3 * SyncSession.unsignedLimit).map { i in
            ChainHead(game: ids[i % ids.count], author: bob.peerID, seq: UInt64(i % 4) + 1)
        }
        let read = disk.opsReadBack
        var session = SyncSession()
        session.peer = alice.peerID
        _ = session.receive(.unsigned(chains), replica: &replica)
        // The attempt happens: ops are read, so many and no more.
        #expect(disk.opsReadBack > read)
        #expect(disk.opsReadBack - read <= SyncSession.unsignedLimit, "\(disk.opsReadBack - read) ops read back for one message")
    }

    /// A member sends many head signatures in one message, none its
    /// author's: at most ``SyncSession/headsLimit`` of them are checked.
    @Test func onlySoManyHeadSignaturesOfOneMessageAreChecked() throws {
        let (genesis, run) = try Fixtures.flagRun(in: circle, moves: 4)
        var replica = Replica(circle: circle)
        for op in [genesis] + run { replica.insert(op) }
        let forged = (0..<3 * SyncSession.headsLimit).map { i in
            HeadSignature(game: .new(genesis.gameID), author: bob.peerID, seq: UInt64(i % 4) + 1, signature: alice.sign([UInt8(i & 0xFF)]))
        }
        var session = SyncSession()
        session.peer = alice.peerID
        _ = session.receive(.heads(forged), replica: &replica)
        let checked = replica.rejectionCounts.values.reduce(0, +)
        // The attempt: the first ones were checked, and refused.
        #expect(checked > 0)
        #expect(checked <= SyncSession.headsLimit, "\(checked) head signatures of one message checked")
    }

    /// A peer that takes some games asks what the others are: each is
    /// described from its overview and genesis, and none wakes.
    @Test func describingSleepingGamesWakesNone() throws {
        var (replica, disk, ids) = try sleepingGames()
        let awake = try #require(replica.awakened(ids[0]))
        let expected = try #require(SyncSession.description(of: ids[0], in: Replica.holding(awake, circle: circle)))
        let read = disk.opsReadBack
        var session = SyncSession()
        let step = session.receive(.describe(ids), replica: &replica)
        let described = step.replies.flatMap { message -> [GameDescription] in
            if case .descriptions(let d) = message { return d }
            return []
        }
        #expect(described.count == ids.count)
        #expect(described.first { $0.gameID == ids[0] } == expected)
        #expect(replica.sleeping.count == 6 && replica.games.isEmpty)
        // One genesis read a game, not a rebuild.
        #expect(disk.opsReadBack - read == ids.count)
    }
}

/// A summary of made-up games, in parts within the document's limits,
/// costs the session no more than ``SyncSession/unheldLimit`` games of
/// the peer's beyond those held here.
@Suite struct SummaryBoundTests {
    @Test func aSummaryOfMadeUpGamesKeepsOnlyABoundedShare() throws {
        let circle = Fixtures.circle(8)
        let (genesis, run) = try Fixtures.flagRun(in: circle, moves: 2)
        var replica = Replica(circle: circle)
        for op in [genesis] + run { replica.insert(op) }
        var session = SyncSession()
        let author = Fixtures.identity(2).peerID
        var vector = VersionVector()
        vector.advance(author, to: 3)
        func madeUp(_ range: Range<Int>) -> [GameID: VersionVector] {
            var out: [GameID: VersionVector] = [:]
            for n in range {
                var bytes = [UInt8](repeating: 0xEE, count: 16)
                withUnsafeBytes(of: UInt64(n).bigEndian) { bytes.replaceSubrange(0..<8, with: $0) }
                if let id = GameID(bytes: bytes) { out[id] = vector }
            }
            return out
        }
        for part in 0..<2 {
            let step = session.receive(.summaryPart(madeUp(part * 20_000..<(part + 1) * 20_000)), replica: &replica)
            #expect(step.violation == nil)
        }
        var last = madeUp(40_000..<40_010)
        last[genesis.gameID] = vector
        let step = session.receive(.summary(last, wantsReply: true), replica: &replica)
        #expect(step.violation == nil)
        #expect(session.peerHolds.count <= SyncSession.unheldLimit + 1, "kept \(session.peerHolds.count) games of the peer's")
        #expect(session.peerHolds[genesis.gameID] != nil, "a game held here is always kept")
    }
}

extension Replica {
    /// A replica holding `game` alone, awake (to describe it as an awake game is).
    static func holding(_ game: GameReplica, circle: CircleKey) -> Replica {
        var replica = Replica(circle: circle)
        replica.games[game.gameID] = game
        return replica
    }
}

/// A member in bad faith writes ops past what a game can take: they are
/// refused (never relayed) and the game names it.
@Suite struct OpQuotaTests {
    @Test func opsPastTheQuotaAreRefusedAndTheAuthorNamed() throws {
        let circle = Fixtures.circle(9)
        let (genesis, _) = try Fixtures.flagRun(in: circle, moves: 0)
        var replica = Replica(circle: circle)
        replica.insert(genesis)
        let state = try #require(replica.state(of: genesis.gameID))
        let cell = try #require((0..<state.genesis.geometry.cellCount).first { !state.board.isRevealed($0) })
        let quota = try #require(replica.games[genesis.gameID]?.opQuota)
        #expect(quota == GameReplica.opQuota(cells: state.genesis.geometry.cellCount))
        let mallory = Fixtures.identity(2)
        let forge = Forge(circle: circle)
        var previous = OpHash.none
        var ops: [Op] = []
        for seq in 1...(quota + 3) {
            let op = forge.op(
                mallory, game: genesis.gameID, seq: seq, lamport: seq + 1, previous: previous,
                payload: .mark(cell: cell, mark: seq % 2 == 1 ? .flag : .none))
            ops.append(op)
            previous = op.hash
        }
        for op in ops.prefix(Int(quota)) { #expect(replica.insert(op).accepted.count == 1) }
        let refused = replica.insert(ops[Int(quota)])
        #expect(refused.rejected.map(\.reason) == [.overQuota] && refused.accepted.isEmpty)
        #expect(replica.games[genesis.gameID]?.overQuota == [mallory.peerID])
        #expect(replica.rejectionCounts[.overQuota] == 1)
    }
}
