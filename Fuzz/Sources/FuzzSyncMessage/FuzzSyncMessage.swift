// Sync messages from a peer (`SyncMessage(decoding:)`), then what the daemon
// does with one: a sync session over a replica holding a game takes it in,
// answers, pushes, and reports how far apart the two sides are.
import FuzzSupport
import SweeperCrypto

@testable import SweeperSync

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSyncMessage(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = FuzzInput(data, size).bytes
    guard let message = try? SyncMessage(decoding: bytes) else { return 0 }
    let again = try? SyncMessage(decoding: message.encoded)
    check(again == message, "a sync message does not survive re-encoding")
    receive(message)
    return 0
}

/// What the daemon does with a decoded message (PeerInbox and GameService).
func receive(_ message: SyncMessage) {
    var replica = Fixtures.replica
    var session = SyncSession()
    // A link of version 8: the peer's live pushes are its own, this side's go live.
    session.peer = Fixtures.players[1].peerID
    session.liveAuthor = Fixtures.players[0].peerID
    _ = session.start(replica: replica)
    let step = session.receive(message, replica: &replica)
    for reply in step.replies { _ = reply.encoded }
    _ = session.push(step.outcome.accepted + step.outcome.signed, replica: replica)
    _ = session.tick(replica: replica)
    _ = session.signHeads(replica: replica)
    _ = session.askForSignatures(replica: replica)
    // What `sweeper peers` shows: ops each side lacks.
    let ours = replica.summary
    for (game, theirs) in session.peerHolds {
        _ = (ours[game] ?? VersionVector()).lag(against: theirs)
        _ = theirs.opCount
    }
    // A side that takes no game and asked what the fixture's game is:
    // takes a description of it, refuses others.
    // A link of version 15 whose peer's first summary came: chains name
    // authors by their place in it.
    var linked = Fixtures.replica
    var chains = SyncSession()
    chains.peer = Fixtures.players[1].peerID
    chains.liveAuthor = Fixtures.players[0].peerID
    chains.peerTakesChains = true
    _ = chains.start(replica: linked)
    _ = chains.receive(.summary(Fixtures.replica.summary, wantsReply: false), replica: &linked)
    let taken = chains.receive(message, replica: &linked)
    for reply in taken.replies { _ = reply.encoded }
    for m in chains.push(taken.outcome.accepted + taken.outcome.signed, replica: linked) {
        check((try? SyncMessage(decoding: m.encoded)) == m, "a pushed message does not survive re-encoding")
    }
    var empty = Replica(circle: Fixtures.circle)
    var asking = SyncSession()
    _ = asking.receive(.summary(Fixtures.replica.summary, wantsReply: false), replica: &empty, taking: .only([]))
    _ = asking.receive(message, replica: &empty, taking: .only([]))
    check(empty.games.isEmpty, "a side that takes no game took one")
    for game in replica.games.values {
        guard let state = game.state else { continue }
        _ = state.digest
        _ = state.scores
        _ = state.endMillis
    }
}

@_cdecl("FuzzSyncMessage_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    writeSeedsIfAsked {
        let replica = Fixtures.replica
        let id = Fixtures.genesis.gameID
        let segments = replica.segments(for: id, after: VersionVector())
        var seeds: [[UInt8]] = [
            SyncMessage.summary(replica.summary, wantsReply: true).encoded,
            SyncMessage.summary([:], wantsReply: false).encoded,
            SyncMessage.interest(.only(Set(replica.summary.keys))).encoded,
            SyncMessage.interest(.allBut([])).encoded,
            SyncMessage.ops(segments).encoded,
        ]
        // Bob's live pushes as his side of a link sends them (the game by its
        // place in the summary, the first position whole, then steps), his
        // heads, a head naming the game by id, and a request for them.
        var bobReplica = replica
        var bob = SyncSession()
        bob.liveAuthor = Fixtures.players[1].peerID
        _ = bob.receive(.summary(replica.summary, wantsReply: false), replica: &bobReplica)
        var moves: [Op] = []
        for cell in [3, 12, 21] {
            // Made directly: the fixture's game may be over, which the replica does not mind.
            guard let game = bobReplica.games[id] else { break }
            let bobID = Fixtures.players[1].peerID
            let op = Op(
                signing: Fixtures.players[1], circle: Fixtures.circle, gameID: id, seq: game.chainLength(of: bobID) + 1,
                lamport: game.maxLamport + 1, previous: game.lastOp(of: bobID)?.hash ?? .none, wallClockMillis: 1_700_000_009_000 + UInt64(cell),
                payload: .flood(Flood(cell: cell, chord: cell == 12, exceptions: [cell + 1]) ?? Flood(cell: 0, chord: false, exceptions: [])!))
            bobReplica.insert(op)
            moves.append(op)
        }
        for m in bob.push(moves, replica: bobReplica) + bob.signHeads(replica: bobReplica) { seeds.append(m.encoded) }
        if let last = moves.last, let signature = last.signature {
            seeds.append(SyncMessage.heads([HeadSignature(game: .new(id), author: nil, seq: last.seq, signature: signature)]).encoded)
        }
        seeds.append(SyncMessage.unsigned([ChainHead(game: id, author: Fixtures.players[0].peerID, seq: 1)]).encoded)
        seeds.append(SyncMessage.describe([id]).encoded)
        if let d = SyncSession.description(of: id, in: replica) { seeds.append(SyncMessage.descriptions([d]).encoded) }
        for s in segments { seeds.append(SyncMessage.ops([s]).encoded) }
        // A summary that lacks the last op of each author: the answer is a segment per author.
        if let vector = replica.summary[id] {
            var behind = vector
            for (author, seq) in vector.heads where seq > 1 { behind = VersionVector(heads: behind.heads.merging([author: seq - 1]) { $1 }) }
            seeds.append(SyncMessage.summary([id: behind], wantsReply: true).encoded)
            // The same answer in the link's compact form (version 15), and the
            // whole game to a side that holds nothing.
            for summary in [[id: behind], [:]] as [[GameID: VersionVector]] {
                var alice = SyncSession()
                alice.liveAuthor = Fixtures.players[0].peerID
                alice.peer = Fixtures.players[1].peerID
                alice.peerTakesChains = true
                var aliceReplica = replica
                _ = alice.start(replica: aliceReplica)
                for m in alice.receive(.summary(summary, wantsReply: false), replica: &aliceReplica).replies { seeds.append(m.encoded) }
            }
        }
        return seeds
    }
    return runFuzzer(argc, argv, fuzzSyncMessage)
}
