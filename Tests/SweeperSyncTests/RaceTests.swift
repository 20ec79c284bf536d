import SweeperConventions
import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// Race games: one genesis, one layout, a board per racer. A racer's moves
/// change its own board alone; the race ends when every racer's board did,
/// and the fastest who cleared it wins. Every rule gives one state in any order.
@Suite struct RaceTests {
    let circle = Fixtures.circle(1)
    var ann: OpAuthor { OpAuthor(identity: Fixtures.identity(1), circle: circle) }
    var bob: OpAuthor { OpAuthor(identity: Fixtures.identity(2), circle: circle) }
    var carol: OpAuthor { OpAuthor(identity: Fixtures.identity(3), circle: circle) }

    /// Ann's race against Bob on a 9×9 board with 10 mines.
    func race(created: UInt64 = 1_000) throws -> (Replica, Op) {
        let (parameters, layout) = try Fixtures.layout(width: 9, height: 9, mines: 10, seed: 7)
        let genesis = try ann.genesis(
            parameters: parameters, layout: layout, seed: 7, questionMarks: false, createdAtMillis: created,
            players: [bob.identity.peerID], race: true)
        var replica = Replica(circle: circle)
        #expect(replica.insert(genesis).accepted.count == 1)
        return (replica, genesis)
    }

    /// Makes `author`'s op with `make` against `replica`, and inserts it.
    @discardableResult
    func play(
        _ author: OpAuthor, _ replica: inout Replica, _ game: GameID,
        _ make: (OpAuthor, GameReplica) throws -> Op?
    ) throws -> Op? {
        let held = try #require(replica.games[game])
        guard let op = try make(author, held) else { return nil }
        #expect(replica.insert(op).rejection(of: op) == nil)
        return op
    }

    /// A covered safe cell of `state`'s board, if any.
    func coveredSafeCell(_ state: GameState) -> Int? {
        (0..<state.genesis.geometry.cellCount).first { !state.genesis.layout.isMine($0) && !state.board.isRevealed($0) }
    }

    @Test func eachRacerMovesOnItsOwnBoardAndAnyOrderGivesOneState() throws {
        var (replica, genesis) = try race()
        let id = genesis.gameID
        let start = try #require(replica.state(of: id))
        #expect(start.isRace && start.usesRace && start.racers == [ann.identity.peerID, bob.identity.peerID].sorted())
        let annStart = try #require(start.lane(of: ann.identity.peerID))
        let cell = try #require(coveredSafeCell(annStart))
        var ops = [genesis]
        ops += [try #require(try play(ann, &replica, id) { try $0.reveal(cell, in: $1, atMillis: 2_000) })]
        let mine = try #require((0..<81).first { start.genesis.layout.isMine($0) })
        ops += [try #require(try play(bob, &replica, id) { try $0.setMark(.flag, on: mine, in: $1, atMillis: 2_100) })]
        let state = try #require(replica.state(of: id))
        let annLane = try #require(state.lane(of: ann.identity.peerID))
        let bobLane = try #require(state.lane(of: bob.identity.peerID))
        // Ann's reveal opened her board only; Bob's flag is on his board only.
        #expect(annLane.board.isRevealed(cell) && !bobLane.board.isRevealed(cell))
        #expect(bobLane.board.mark(at: mine) == .flag && annLane.board.mark(at: mine) == .none)
        #expect(state.shown(to: bob.identity.peerID).board.mark(at: mine) == .flag)
        #expect(state.shown(to: carol.identity.peerID).board.isRevealed(cell), "a spectator watches the creator's board")
        // Bob may make the same reveal on his own board: a move of his, not a no-op.
        ops += [try #require(try play(bob, &replica, id) { try $0.reveal(cell, in: $1, atMillis: 2_200) })]
        #expect(replica.state(of: id)?.lane(of: bob.identity.peerID)?.board.isRevealed(cell) == true)
        // Carol does not race: she watches, and her op is refused.
        let game = try #require(replica.games[id])
        #expect(throws: MoveError.notAPlayer) { try carol.reveal(cell, in: game, atMillis: 3_000) }
        let forged = Op(
            signing: carol.identity, circle: circle, gameID: id, seq: 1, lamport: 9, previous: .none, wallClockMillis: 3_000,
            payload: .reveal(CellRuns(cells: [cell])))
        #expect(replica.insert(forged).rejection(of: forged) == .notPlayer)
        // Nobody joins a race once made.
        #expect(throws: MoveError.racersAreFixed) { try ann.addPlayers([carol.identity.peerID], in: game, atMillis: 3_000) }
        let addition = Op(
            signing: ann.identity, circle: circle, gameID: id, seq: 3, lamport: 20, previous: ops[1].hash, wallClockMillis: 3_000,
            payload: .players([carol.identity.peerID]))
        #expect(replica.insert(addition).rejection(of: addition) == .notPlayer)
        // Any order gives one state, whose digest covers each racer's board.
        let digest = try #require(replica.state(of: id)?.digest)
        var reversed = Replica(circle: circle)
        for op in ops.reversed() { reversed.insert(op) }
        #expect(reversed.state(of: id)?.digest == digest)
        var withoutBobsReveal = Replica(circle: circle)
        for op in ops.dropLast() { withoutBobsReveal.insert(op) }
        #expect(withoutBobsReveal.state(of: id)?.digest != digest, "a racer's board is in the digest")
    }

    @Test func aRaceEndsWhenEveryRacerDidAndTheFastestWhoClearedItWins() throws {
        var (replica, genesis) = try race()
        let id = genesis.gameID
        let state = try #require(replica.state(of: id))
        let layout = state.genesis.layout
        let safe = (0..<81).filter { !layout.isMine($0) }
        // Ann clears her board with one reveal of every safe cell.
        try play(ann, &replica, id) { try $0.reveal(cells: safe, in: $1, atMillis: 60_000) }
        var now = try #require(replica.state(of: id))
        #expect(now.lane(of: ann.identity.peerID)?.status == .won)
        #expect(now.status == .playing && now.raceWinner == ann.identity.peerID, "Bob still races")
        // Ann's board is over: she moves no more.
        let afterWin = try #require(replica.games[id])
        #expect(throws: MoveError.gameOver(.won)) { try ann.reveal(safe[0], in: afterWin, atMillis: 61_000) }
        // Bob gives up: his board ends, lost, and so does the race.
        let resign = try #require(try play(bob, &replica, id) { try $0.resign(in: $1, atMillis: 70_000) })
        now = try #require(replica.state(of: id))
        let bobLane = try #require(now.lane(of: bob.identity.peerID))
        #expect(bobLane.status == .lost && bobLane.gaveUpMillis == 70_000 && bobLane.endMillis == 70_000 && bobLane.trippedBy == nil)
        #expect(now.status == .won && now.raceWinner == ann.identity.peerID && now.endMillis == 70_000)
        let ended = try #require(replica.games[id])
        #expect(try bob.resign(in: ended, atMillis: 71_000) == nil, "one resign a racer")
        // A move Bob's chain holds after his resign (crafted: his device makes none) changes nothing.
        let late = Op(
            signing: bob.identity, circle: circle, gameID: id, seq: 2, lamport: resign.lamport + 1, previous: resign.hash,
            wallClockMillis: 71_000, payload: .reveal(CellRuns(cells: safe)))
        let digest = now.digest
        #expect(replica.insert(late).accepted.count == 1)
        #expect(replica.state(of: id)?.digest == digest && replica.state(of: id)?.lane(of: bob.identity.peerID)?.status == .lost)
        // Each racer's figures count its own moves on its own board.
        let game = try #require(replica.games[id])
        #expect(game.figures(of: ann.identity.peerID)?.solvedThreeBV == game.figures(of: ann.identity.peerID)?.threeBV)
        #expect(game.figures(of: ann.identity.peerID)?.parts[bob.identity.peerID] == nil)
        #expect(game.figures(of: nil) == nil, "a race has no figures of its own")
        // A replay plays one racer's board again.
        let annReplay = try #require(try game.replay(racer: ann.identity.peerID))
        #expect(annReplay.steps.map(\.author) == [ann.identity.peerID] && annReplay.steps.last?.status == .won)
        let bobReplay = try #require(try game.replay(racer: bob.identity.peerID))
        #expect(bobReplay.steps.first?.kind == .resign && bobReplay.steps.first?.status == .lost)
    }

    @Test func onlyARacerResignsAndTheFirstToClearWinsInAnyOrder() throws {
        var (replica, genesis) = try race()
        let id = genesis.gameID
        let begun = try #require(replica.state(of: id))
        let layout = begun.genesis.layout
        let safe = (0..<81).filter { !layout.isMine($0) }
        // Carol may not resign in a race she does not run; nobody resigns a game played together.
        let game = try #require(replica.games[id])
        #expect(throws: MoveError.notARace) { try carol.resign(in: game, atMillis: 5) }
        let forged = Op(
            signing: carol.identity, circle: circle, gameID: id, seq: 1, lamport: 5, previous: .none, wallClockMillis: 5,
            payload: .resign)
        #expect(replica.insert(forged).rejection(of: forged) == .notPlayer)
        let together = try Fixtures.genesis(by: ann)
        var plain = Replica(circle: circle)
        plain.insert(together)
        let plainGame = try #require(plain.games[together.gameID])
        #expect(throws: MoveError.notARace) { try ann.resign(in: plainGame, atMillis: 5) }
        // Bob clears his board by an earlier clock than Ann, though his op comes later by stamp.
        let a = try #require(try play(ann, &replica, id) { try $0.reveal(cells: safe, in: $1, atMillis: 90_000) })
        let b = try #require(try play(bob, &replica, id) { try $0.reveal(cells: safe, in: $1, atMillis: 80_000) })
        let state = try #require(replica.state(of: id))
        #expect(state.status == .won && state.raceWinner == bob.identity.peerID && state.endMillis == 90_000)
        var other = Replica(circle: circle)
        for op in [b, a, genesis] { other.insert(op) }
        #expect(other.state(of: id)?.digest == state.digest && other.state(of: id)?.raceWinner == bob.identity.peerID)
    }

    @Test func aRaceNamesItsRacersAndSurvivesItsEncoding() throws {
        let (parameters, layout) = try Fixtures.layout(width: 9, height: 9, mines: 10, seed: 7)
        #expect(throws: ByteDecodingError.invalidGenesis("a race names its players")) {
            try Genesis(parameters: parameters, layout: layout, questionMarks: false, seed: 7, createdAtMillis: 1, isRace: true)
        }
        let (_, genesis) = try race()
        let decoded = try Op(decoding: genesis.encoded)
        guard case .genesis(let g) = decoded.payload else { Issue.record("not a genesis"); return }
        #expect(g.isRace && g.players == [bob.identity.peerID])
        // Bit 3 of the options byte says race; a plain game of the same board has another id.
        let plain = try ann.genesis(
            parameters: parameters, layout: layout, seed: 7, questionMarks: false, createdAtMillis: 1_000, players: [bob.identity.peerID])
        #expect(plain.gameID != genesis.gameID)
        let resign = try Op(
            decoding: Op(
                signing: bob.identity, circle: circle, gameID: genesis.gameID, seq: 1, lamport: 2, previous: .none,
                wallClockMillis: 5, payload: .resign
            ).encoded)
        #expect(resign.payload == .resign)
    }

    /// A race move travels as any move does: a live push of the same
    /// bytes as the same move in a game played together (the race is in
    /// the genesis, not in each move). Prints what a flag and a reveal cost
    /// on the wire: the push, a type byte, the stream's 17-byte MAC and the
    /// 4-byte frame length.
    @Test func aRaceMoveTravelsAsSmallAsAnyMove() throws {
        let (parameters, layout) = try Fixtures.layout(width: 9, height: 9, mines: 10, seed: 7)
        var sizes: [[Int]] = []
        for race in [false, true] {
            let genesis = try ann.genesis(
                parameters: parameters, layout: layout, seed: 7, questionMarks: false, createdAtMillis: 1_000,
                players: [bob.identity.peerID], race: race)
            var pair = Pair(Replica(circle: circle), Replica(circle: circle))
            for i in 0..<2 { pair.replicas[i].insert(genesis) }
            pair.sessions[0].peer = bob.identity.peerID
            pair.sessions[1].peer = ann.identity.peerID
            pair.sessions[1].liveAuthor = bob.identity.peerID
            pair.start()
            _ = try pair.run()
            let held = try #require(pair.replicas[1].games[genesis.gameID])
            let board = try #require(held.state?.shown(to: bob.identity.peerID))
            let covered = (0..<81).filter { !board.board.isRevealed($0) }
            let mine = try #require(covered.first { layout.isMine($0) })
            let safe = try #require(covered.first { !layout.isMine($0) })
            var bytes: [Int] = []
            for make in [{ try self.bob.setMark(.flag, on: mine, in: $0, atMillis: 2_000) }, { try self.bob.reveal(safe, in: $0, atMillis: 3_000) }] {
                let game = try #require(pair.replicas[1].games[genesis.gameID])
                let op = try #require(try make(game))
                #expect(pair.replicas[1].insert(op).accepted.count == 1)
                let pushed = pair.sessions[1].push([op], replica: pair.replicas[1])
                guard case .live = try #require(pushed.first), pushed.count == 1 else {
                    Issue.record("not one live push: \(pushed)")
                    return
                }
                bytes.append(pushed[0].encoded.count + 1 + 17 + 4)
                let step = pair.sessions[0].receive(try SyncMessage(decoding: pushed[0].encoded), replica: &pair.replicas[0])
                #expect(step.outcome.accepted.map(\.hash) == [op.hash])
            }
            sizes.append(bytes)
            // The receiver's board is the mover's: Bob's board in the race, the one board otherwise.
            #expect(pair.replicas[0].state(of: genesis.gameID)?.shown(to: bob.identity.peerID).board.isRevealed(safe) == true)
            #expect(pair.replicas[0].state(of: genesis.gameID)?.shown(to: ann.identity.peerID).board.isRevealed(safe) == !race)
        }
        print("race move on the wire: a flag \(sizes[1][0]) bytes, a reveal \(sizes[1][1]) bytes (together: \(sizes[0][0]) and \(sizes[0][1]))")
        #expect(sizes[1] == sizes[0])
    }

    @Test func aPeerThatDoesNotReadRacesIsNotSentOneNorItsDescription() throws {
        let (holder, genesis) = try race()
        var old = Pair(holder, Replica(circle: circle))
        old.sessions[0].peerReads.remove(.race)
        old.start()
        _ = try old.run()
        #expect(old.replicas[1].games[genesis.gameID] == nil, "a race went to a peer that cannot read it")
        // Asked to describe it (by a peer that learnt its id elsewhere), the holder says nothing of it.
        let step = old.sessions[0].receive(.describe([genesis.gameID]), replica: &old.replicas[0])
        #expect(step.replies.isEmpty)
        var current = Pair(holder, Replica(circle: circle))
        current.start()
        _ = try current.run()
        #expect(current.replicas[1].state(of: genesis.gameID)?.isRace == true)
        let described = current.sessions[0].receive(.describe([genesis.gameID]), replica: &current.replicas[0])
        #expect(described.replies.count == 1, "a peer that reads races is described the race")
    }
}
