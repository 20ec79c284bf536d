import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// Builds ops by hand, valid or not, for acceptance tests.
struct Forge {
    let circle: CircleKey

    func op(
        _ identity: SigningIdentity, game: GameID, seq: UInt64, lamport: UInt64, previous: OpHash,
        payload: OpPayload, proofCircle: CircleKey? = nil, author: PeerID? = nil, wall: UInt64 = 5
    ) -> Op {
        let who = author ?? identity.peerID
        let unsigned = Op(
            gameID: game, author: who, seq: seq, lamport: lamport, previous: previous, wallClockMillis: wall,
            membershipProof: (proofCircle ?? circle).membershipProof(for: who), payload: payload, signature: nil)
        return unsigned.with(signature: identity.sign(Op.signatureDomain + unsigned.canonicalBytes))
    }
}

@Suite struct ReplicaTests {
    let circle = Fixtures.circle(3)
    var alice: OpAuthor { OpAuthor(identity: Fixtures.identity(1), circle: circle) }
    var bob: OpAuthor { OpAuthor(identity: Fixtures.identity(2), circle: circle) }

    func started() throws -> (Replica, Op) {
        var r = Replica(circle: circle)
        let g = try Fixtures.genesis(by: alice)
        let outcome = r.insert(g)
        #expect(outcome.accepted == [g])
        return (r, g)
    }

    /// Some covered safe cell in the game.
    func coveredSafeCells(_ state: GameState) -> [Int] {
        (0..<state.genesis.geometry.cellCount).filter { !state.board.isRevealed($0) && !state.genesis.layout.isMine($0) }
    }

    @Test func genesisRevealsTheOpening() throws {
        let (r, g) = try started()
        let state = try #require(r.state(of: g.gameID))
        let start = state.genesis.startIndex
        #expect(state.board.isRevealed(start))
        #expect(state.firstRevealer(of: start) == alice.identity.peerID)
        #expect(state.status == .playing)
        #expect(state.scores.isEmpty)
        #expect(g.gameID == state.genesis.gameID(creator: alice.identity.peerID))
    }

    @Test func opsBeforeGenesisAndAfterGapsWait() throws {
        var source = Replica(circle: circle)
        let g = try Fixtures.genesis(by: alice)
        source.insert(g)
        var ops: [Op] = []
        for _ in 0..<3 {
            let game = try #require(source.games[g.gameID])
            let state = try #require(game.state)
            let cell = try #require(coveredSafeCells(state).first)
            let op = try #require(try bob.reveal(cell, in: game, atMillis: 10))
            source.insert(op)
            ops.append(op)
        }
        var r = Replica(circle: circle)
        #expect(r.insert(ops[2]).waiting == 1)
        #expect(r.insert(ops[0]).waiting == 1)
        #expect(r.state(of: g.gameID) == nil)
        #expect(r.summary.isEmpty)
        let outcome = r.insert(g)
        #expect(outcome.accepted.map(\.hash) == [g.hash, ops[0].hash])
        let filled = r.insert(ops[1])
        #expect(filled.accepted.map(\.hash) == [ops[1].hash, ops[2].hash])
        #expect(r.summary[g.gameID]?[bob.identity.peerID] == 3)
        #expect(r.state(of: g.gameID)?.digest == source.state(of: g.gameID)?.digest)
        #expect(r.insert(ops[1]).duplicates == 1)
    }

    @Test func forgedOpsAreRejectedCountedAndChangeNothing() throws {
        var (r, g) = try started()
        let game = try #require(r.games[g.gameID])
        let state = try #require(game.state)
        let cell = try #require(coveredSafeCells(state).first)
        let before = state.digest
        let forge = Forge(circle: circle)
        let mallory = Fixtures.identity(66)
        let reveal = OpPayload.reveal(CellRuns(cells: [cell]))

        // Bad signature: a valid op with one signature bit flipped.
        let good = try #require(try bob.reveal(cell, in: game, atMillis: 9))
        var sig = try #require(good.signature).bytes
        sig[0] ^= 1
        let badSig = good.with(signature: Signature(bytes: sig))
        #expect(r.insert(badSig).rejected.map(\.reason) == [.badSignature])
        #expect(r.insert(good.with(signature: nil)).rejected.map(\.reason) == [.badSignature])

        // A non-member: a proof made under another circle.
        let outsider = forge.op(mallory, game: g.gameID, seq: 1, lamport: 2, previous: .none, payload: reveal, proofCircle: Fixtures.circle(99))
        #expect(r.insert(outsider).rejected.map(\.reason) == [.notMember])

        // Another member's key: Bob's author key and proof, Mallory's signature.
        let impostor = forge.op(mallory, game: g.gameID, seq: 1, lamport: 2, previous: .none, payload: reveal, author: bob.identity.peerID)
        #expect(r.insert(impostor).rejected.map(\.reason) == [.badSignature])

        // A broken chain: a member's first op that names a previous op.
        let carol = Fixtures.identity(3)
        let broken = forge.op(carol, game: g.gameID, seq: 1, lamport: 2, previous: g.hash, payload: reveal)
        #expect(r.insert(broken).rejected.map(\.reason) == [.brokenChain])

        // Cells off this board (the decoder allows up to 500×500).
        let far = forge.op(Fixtures.identity(4), game: g.gameID, seq: 1, lamport: 2, previous: .none, payload: .reveal(CellRuns(cells: [81, 82])))
        #expect(r.insert(far).rejected.map(\.reason) == [.cellOutOfRange])
        let farMark = forge.op(Fixtures.identity(5), game: g.gameID, seq: 1, lamport: 2, previous: .none, payload: .mark(cell: 1000, mark: .flag))
        #expect(r.insert(farMark).rejected.map(\.reason) == [.cellOutOfRange])

        // A second genesis, and a creator's first op that is no genesis.
        let fakeGenesis = forge.op(alice.identity, game: g.gameID, seq: 1, lamport: 1, previous: .none, payload: .assisted)
        #expect(r.games[g.gameID]?.equivocators.isEmpty == true)
        #expect(r.insert(fakeGenesis).rejected.map(\.reason) == [.conflictingOp])
        // The creator signed two different ops at one place: the game shows it.
        #expect(r.games[g.gameID]?.equivocators == [alice.identity.peerID])
        let otherGenesis = try Fixtures.genesis(by: bob, seed: 2)
        let wrongGame = forge.op(bob.identity, game: g.gameID, seq: 1, lamport: 1, previous: .none, payload: otherGenesis.payload)
        #expect(r.insert(wrongGame).rejected.map(\.reason) == [.invalidGenesis])

        // A Lamport time that does not increase along the chain.
        let b1 = forge.op(carol, game: g.gameID, seq: 1, lamport: 5, previous: .none, payload: .assisted)
        #expect(r.insert(b1).accepted.count == 1)
        let b2 = forge.op(carol, game: g.gameID, seq: 2, lamport: 5, previous: b1.hash, payload: reveal)
        #expect(r.insert(b2).rejected.map(\.reason) == [.brokenChain])

        #expect(r.rejectionCounts[.badSignature] == 3)
        #expect(r.rejectionCounts[.notMember] == 1)
        #expect(r.rejectionCounts[.brokenChain] == 2)
        #expect(r.rejectionCounts[.cellOutOfRange] == 2)
        let after = try #require(r.state(of: g.gameID))
        #expect(after.board.revealedSafeCount == state.board.revealedSafeCount)
        #expect(after.isAssisted)  // carol's valid assist op is the only change
        var withoutCarol = Replica(circle: circle)
        withoutCarol.insert(g)
        #expect(withoutCarol.state(of: g.gameID)?.digest == before)
    }

    @Test func firstRevealerAndMarksFollowTheStampOrder() throws {
        let (r, g) = try started()
        let game = try #require(r.games[g.gameID])
        let state = try #require(game.state)
        let cell = try #require(coveredSafeCells(state).first { state.genesis.layout.adjacentMines($0) > 0 })
        // Both reveal the same numbered cell concurrently (same Lamport time).
        let a = try #require(try alice.reveal(cell, in: game, atMillis: 20))
        let b = try #require(try bob.reveal(cell, in: game, atMillis: 21))
        #expect(a.lamport == b.lamport)
        let mark1 = try #require(try bob.setMark(.flag, on: cell, in: game, atMillis: 22))
        let winner = min(a.stamp, b.stamp).author
        for order in [[a, b], [b, a]] {
            var copy = r
            for op in order { copy.insert(op) }
            let s = try #require(copy.state(of: g.gameID))
            #expect(s.firstRevealer(of: cell) == winner)
            // One cell, one point: the figure the ending calls their cells.
            #expect(s.scores[winner] == 1)
            #expect(s.scores.count == 1)
        }
        // A mark loses to nothing on a revealed cell.
        var copy = r
        copy.insert(mark1)
        #expect(copy.state(of: g.gameID)?.board.mark(at: cell) == .flag)
        copy.insert(a)
        #expect(copy.state(of: g.gameID)?.board.mark(at: cell) == Mark.none)
    }

    /// A member's op that claims a Lamport time far ahead (the limit
    /// itself, or leading what the replica holds by more than the bound) is
    /// refused, and the game goes on: the next honest move still fits.
    /// Within the bound a time far ahead is taken, and the game goes on all
    /// the same, for authors old and new.
    @Test func anOpFromTheFarFutureIsRefusedAndTheGameGoesOn() throws {
        var (r, g) = try started()
        let forge = Forge(circle: circle)
        let carol = Fixtures.identity(7)
        let state = try #require(r.state(of: g.gameID))
        let cell = try #require(coveredSafeCells(state).first)
        let held = try #require(r.games[g.gameID]).maxLamport
        for lamport in [Op.lamportLimit, held + Op.lamportLead + 1] {
            let far = forge.op(carol, game: g.gameID, seq: 1, lamport: lamport, previous: .none, payload: .mark(cell: cell, mark: .flag))
            var copy = r
            #expect(copy.insert(far).rejection(of: far) == .lamportOutOfRange, "Lamport time \(lamport)")
            let game = try #require(copy.games[g.gameID])
            let move = try #require(try bob.setMark(.flag, on: cell, in: game, atMillis: 30))
            #expect(copy.insert(move).accepted == [move], "after a refused time of \(lamport)")
        }
        let ahead = forge.op(carol, game: g.gameID, seq: 1, lamport: held + Op.lamportLead, previous: .none, payload: .mark(cell: cell, mark: .flag))
        #expect(r.insert(ahead).accepted == [ahead])
        let game = try #require(r.games[g.gameID])
        let next = try #require(try bob.setMark(.question, on: cell, in: game, atMillis: 31))
        #expect(next.lamport == held + Op.lamportLead + 1)
        #expect(r.insert(next).accepted == [next])
    }

    @Test func lastWriterWinsOnMarks() throws {
        let (r, g) = try started()
        let game = try #require(r.games[g.gameID])
        let state = try #require(game.state)
        let cell = try #require(coveredSafeCells(state).first)
        let a = try #require(try alice.setMark(.flag, on: cell, in: game, atMillis: 1))
        let b = try #require(try bob.setMark(.question, on: cell, in: game, atMillis: 2))
        #expect(a.lamport == b.lamport)
        let expected: Mark = a.stamp > b.stamp ? .flag : .question
        for order in [[a, b], [b, a]] {
            var copy = r
            for op in order { copy.insert(op) }
            #expect(copy.state(of: g.gameID)?.board.mark(at: cell) == expected)
        }
        // A later op (higher Lamport) wins whatever the author.
        var copy = r
        copy.insert(a)
        copy.insert(b)
        let copyGame = try #require(copy.games[g.gameID])
        let later = try #require(try alice.setMark(.none, on: cell, in: copyGame, atMillis: 3))
        copy.insert(later)
        #expect(copy.state(of: g.gameID)?.board.mark(at: cell) == Mark.none)
    }

    @Test func winningAndLosing() throws {
        var (r, g) = try started()
        let layout = try #require(r.state(of: g.gameID)).genesis.layout
        // Bob reveals every safe cell: the game is won.
        var won = r
        let game = try #require(won.games[g.gameID])
        let safe = (0..<81).filter { !layout.isMine($0) }
        let opening = Set(safe.filter { game.state?.board.isRevealed($0) == true })
        let op = bob.make(.reveal(CellRuns(cells: safe)), in: game, atMillis: 77)
        won.insert(op)
        let ws = try #require(won.state(of: g.gameID))
        #expect(ws.status == .won)
        #expect(ws.endMillis == 77)
        #expect(ws.trippedBy == nil)
        // Bob's score is the cells he opened, as his part of the ending says.
        let expected = safe.filter { !opening.contains($0) }.count
        #expect(ws.scores == [bob.identity.peerID: expected])
        #expect(won.games[g.gameID]?.figures(of: nil)?.parts[bob.identity.peerID]?.cellsOpened == expected)
        // Alice reveals a mine: lost, and Alice tripped it.
        let mine = try #require((0..<81).first { layout.isMine($0) })
        let playing = try #require(r.games[g.gameID])
        let boom = try #require(try alice.reveal(mine, in: playing, atMillis: 88))
        r.insert(boom)
        let ls = try #require(r.state(of: g.gameID))
        #expect(ls.status == .lost)
        #expect(ls.trippedBy == alice.identity.peerID)
        #expect(ls.trippedMine == mine)
        #expect(ls.endMillis == 88)
        let lostGame = try #require(r.games[g.gameID])
        #expect(throws: MoveError.gameOver(.lost)) { try alice.reveal(0, in: lostGame, atMillis: 1) }
    }

    @Test func catchUpSegmentVerifiesOneSignatureAndRejectsTampering() throws {
        let world = try OpWorld.make(seed: 21, steps: 120)
        let source = world.replicas[0]
        let segments = source.segments(for: world.gameID, after: VersionVector())
        var r = Replica(circle: world.circle)
        for s in try SyncMessage.ops(segments).roundTripSegments() { r.insert(s) }
        #expect(r.state(of: world.gameID)?.digest == source.state(of: world.gameID)?.digest)
        #expect(r.rejectionCounts.isEmpty)

        // Change one op in the middle of a segment: the chain no longer matches the signature.
        let longest = try #require(segments.max { $0.ops.count < $1.ops.count })
        try #require(longest.ops.count >= 3)
        var ops = longest.ops
        let victim = ops[1]
        ops[1] = Op(
            gameID: victim.gameID, author: victim.author, seq: victim.seq, lamport: victim.lamport, previous: victim.previous,
            wallClockMillis: victim.wallClockMillis + 1, membershipProof: victim.membershipProof, payload: victim.payload, signature: nil)
        let tampered = try #require(OpSegment(verifiedOps: ops))
        let encoded = SyncMessage.ops([tampered]).encoded
        var fresh = Replica(circle: world.circle)
        for s in try SyncMessage(decoding: encoded).segmentsOrEmpty { fresh.insert(s) }
        #expect(fresh.rejectionCounts[.badSignature] == longest.ops.count)
        #expect(fresh.games[world.gameID]?.opCount ?? 0 <= 1)
    }

    /// A segment refused at its signed end puts back an existing game as it
    /// was: the chain's length, a held op's missing signature that the
    /// segment filled in, the ops waiting for a gap, and the state; with no
    /// copy of the game held while the segment goes in.
    @Test func aRefusedSegmentPutsTheChainSignaturesAndWaitingOpsBack() throws {
        var (r, g) = try started()
        let forge = Forge(circle: circle)
        let bob = Fixtures.identity(2)
        let state = try #require(r.state(of: g.gameID))
        let cells = coveredSafeCells(state)
        try #require(cells.count >= 6)
        var ops: [Op] = []
        for seq in 1...6 {
            let cell = seq == 4 ? state.genesis.geometry.cellCount + 7 : cells[seq]  // the 4th is off the board
            ops.append(
                forge.op(
                    bob, game: g.gameID, seq: UInt64(seq), lamport: UInt64(seq + 1), previous: ops.last?.hash ?? .none,
                    payload: .mark(cell: cell, mark: .flag)))
        }
        // Held: 1 (without its signature, vouched for by 2's) and 2; waiting: 6.
        let held = try #require(OpSegment(verifiedOps: [ops[0].with(signature: nil), ops[1]]))
        #expect(r.insert(held).accepted.count == 2)
        #expect(r.insert(ops[5]).waiting == 1)
        let digest = try #require(r.state(of: g.gameID)?.digest)

        // 1 signed again, 2 again, 3, and 4 (the signed end) off the board.
        let segment = try #require(OpSegment(verifiedOps: [ops[0], ops[1], ops[2].with(signature: nil), ops[3]]))
        let outcome = r.insert(segment)
        #expect(outcome.accepted.isEmpty)
        #expect(outcome.rejected.map(\.seq) == [1, 2, 3, 4])
        let game = try #require(r.games[g.gameID])
        #expect(game.chainLength(of: bob.peerID) == 2)
        #expect(game.op(author: bob.peerID, seq: 1)?.signature == nil)
        #expect(game.pendingCount == 1)
        #expect(game.state?.digest == digest)

        // What is held still takes what follows on: 3 goes in, 6 still waits for 5.
        let next = r.insert(ops[2])
        #expect(next.accepted.map(\.seq) == [3])
        #expect(r.games[g.gameID]?.pendingCount == 1)
        #expect(r.insert(ops[5]).duplicates == 1)  // 6 is the one waiting
        #expect(r.state(of: g.gameID)?.board.mark(at: cells[3]) == .flag)
    }

    @Test func restoreFromStoredOpsGivesTheSameState() throws {
        let world = try OpWorld.make(seed: 8, steps: 150)
        let source = world.replicas[1]
        let stored = (source.games[world.gameID]?.everyOp ?? []).map(\.encoded).shuffled(seed: 3)
        var restored = Replica(circle: world.circle)
        let outcome = restored.restore(try stored.map { try Op(decoding: $0) })
        #expect(outcome.rejected.isEmpty)
        #expect(restored.summary == source.summary)
        #expect(restored.state(of: world.gameID)?.digest == source.state(of: world.gameID)?.digest)
    }

    @Test func theAuthorRefusesMovesThatChangeNothing() throws {
        var (r, g) = try started()
        let game = try #require(r.games[g.gameID])
        let start = try #require(game.state).genesis.startIndex
        #expect(try alice.reveal(start, in: game, atMillis: 1) == nil)
        #expect(throws: MoveError.cellOffBoard(81)) { try alice.reveal(81, in: game, atMillis: 1) }
        #expect(throws: MoveError.unknownGame) { try alice.reveal(0, in: GameReplica(gameID: g.gameID), atMillis: 1) }
        let assist = try #require(try bob.peek(in: game, atMillis: 1))
        r.insert(assist)
        let assisted = try #require(r.games[g.gameID])
        #expect(try bob.peek(in: assisted, atMillis: 2) == nil)
        #expect(r.state(of: g.gameID)?.isAssisted == true)
        #expect(r.state(of: g.gameID)?.assistedBy == [bob.identity.peerID])
    }
}

extension SyncMessage {
    func roundTripSegments() throws -> [OpSegment] { try SyncMessage(decoding: encoded).segmentsOrEmpty }

    var segmentsOrEmpty: [OpSegment] {
        if case .ops(let s) = self { return s }
        return []
    }
}
