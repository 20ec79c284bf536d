import SweeperConventions
import SweeperCrypto
import SweeperMessages
import SweeperNet
import SweeperSync
import Testing

@testable import SweeperDaemon

/// Played time: what counts, what does not, and that every daemon adds up
/// the same time from the same shares, whatever their wall clocks say.
@Suite struct PlayTimeTests {
    let game = GameID(bytes: [UInt8](repeating: 9, count: 16))!
    let other = GameID(bytes: [UInt8](repeating: 8, count: 16))!

    /// A player's ledger with an identity to sign its shares, ticked by the test.
    struct Player {
        let identity: SigningIdentity
        var ledger: PlayLedger
        /// Added to the shared wall clock: this machine's clock error (ms).
        let skew: Int64

        init(skew: Int64 = 0, identity: SigningIdentity = SigningIdentity()) {
            self.identity = identity
            ledger = PlayLedger(ownID: identity.peerID)
            self.skew = skew
        }

        var id: PeerID { identity.peerID }

        func wall(_ t: Double) -> UInt64 { UInt64(Int64(1_795_000_000_000) + Int64(t * 1000) + skew) }

        /// Signs the shares that are due, as the daemon does; returns them.
        mutating func sign(at t: Double, all: Bool = false) -> [PlayNote] {
            let due = ledger.due(now: t, wall: wall(t), all: all)
            let notes = due.compactMap {
                PlayNote(signing: identity, game: $0.game.bytes, serial: $0.serial, earlier: $0.own.earlier, periods: $0.own.periods)
            }
            for n in notes { ledger.take(n) }
            return notes
        }

        mutating func view(_ game: GameID?, at t: Double, others: [PeerID: GameID] = [:]) {
            if let game { ledger.activity(in: game, now: t, wall: wall(t)) }
            ledger.tick(ownGame: game, others: others, now: t, wall: wall(t))
        }

        func seconds(_ game: GameID, at t: Double) -> Double? {
            ledger.playedMillis(game, now: t).map { Double($0) / 1000 }
        }
    }

    @Test func aGameCountsOnlyWhileAViewerShowsItAndStopsAtItsEnd() {
        var p = Player()
        // Nobody looked for 20 s: no share at all, so no time.
        p.view(nil, at: 20)
        #expect(p.seconds(game, at: 20) == nil)
        // Open from 20 s to 23 s (ticked as the daemon does, every 250 ms).
        p.view(game, at: 20)
        for t in stride(from: 20.25, through: 23, by: 0.25) { p.view(game, at: t) }
        #expect(p.seconds(game, at: 23) == 3)
        // Between ticks the open period counts up to the moment asked.
        #expect(p.seconds(game, at: 23.1).map { abs($0 - 3.1) < 0.001 } == true)
        p.view(nil, at: 23.5)
        #expect(p.seconds(game, at: 23.5) == 3.5)
        // Closed: the time stands while nobody looks.
        p.view(nil, at: 60)
        #expect(p.seconds(game, at: 60) == 3.5)
        // Open again, then the game ends at 62 s: it counts to the end, not after.
        p.view(game, at: 60)
        p.view(game, at: 61)
        p.ledger.gameEnded(game, now: 62)
        p.view(game, at: 70)
        #expect(p.seconds(game, at: 70) == 5.5)
        // The share says the same once signed, in two periods.
        let notes = p.sign(at: 70, all: true)
        #expect(notes.count == 1 && notes.first?.total == 5_500 && notes.first?.periods.count == 2)
        #expect(notes.first?.isAuthentic == true)
    }

    @Test func aForgottenGameKeepsNoTimeAndCountsAgainOnceFollowed() {
        var p = Player()
        var q = Player()
        p.view(game, at: 0)
        for t in stride(from: 0.25, through: 2, by: 0.25) { p.view(game, at: t) }
        q.view(game, at: 0)
        q.view(game, at: 1)
        let theirs = q.sign(at: 1, all: true)
        for n in theirs { p.ledger.take(n) }
        #expect(p.seconds(game, at: 2) == 3)
        p.ledger.forget(game)
        #expect(p.seconds(game, at: 2) == nil)
        #expect(p.sign(at: 3, all: true).isEmpty)
        // A viewer still showing it counts nothing, and peers' shares of it are refused.
        for t in stride(from: 3, through: 5, by: 0.25) { p.view(game, at: t) }
        #expect(p.seconds(game, at: 5) == nil)
        #expect(theirs.allSatisfy { !p.ledger.take($0) })
        // Followed again: shares are taken and the viewer counts.
        p.ledger.follow(game)
        #expect(theirs.allSatisfy { p.ledger.take($0) })
        p.view(game, at: 6)
        p.view(game, at: 7)
        #expect(p.seconds(game, at: 7) == 2)
    }

    @Test func anIdleViewerStopsCountingAfterFiveMinutesUntilTheNextKey() {
        var p = Player()
        p.view(game, at: 0)
        // No key for 10 minutes: the viewer stays, the player is away after the idle limit.
        for t in stride(from: 1.0, through: 600, by: 1) { p.ledger.tick(ownGame: game, others: [:], now: t, wall: p.wall(t)) }
        #expect(p.seconds(game, at: 600) == PlayLedger.idleLimit)
        #expect(!p.ledger.isActive(game, now: 600))
        // A key: counting again, from now.
        p.view(game, at: 600)
        p.view(game, at: 610)
        #expect(p.seconds(game, at: 610) == PlayLedger.idleLimit + 10)
    }

    @Test func movesWithoutAViewerCountTheTimeBetweenThemUpToTheIdleLimit() {
        var p = Player()
        p.ledger.activity(in: game, now: 0, wall: p.wall(0))
        p.ledger.activity(in: game, now: 30, wall: p.wall(30))
        #expect(p.seconds(game, at: 100) == 30)
        // Ten minutes later: a new period, the gap does not count.
        p.ledger.activity(in: game, now: 630, wall: p.wall(630))
        p.ledger.activity(in: game, now: 640, wall: p.wall(640))
        #expect(p.seconds(game, at: 700) == 40)
    }

    /// Two players watch together; the second machine's clock is ten
    /// minutes fast. The smaller id counts the time they share, the larger
    /// only its own time alone: every daemon, holding both shares, shows
    /// the union of their time, as long as it was.
    @Test func playersWatchingTogetherCountTheirTimeOnceWhateverTheirClocksSay() {
        var (a, b) = (Player(), Player(skew: 600_000))
        if b.id < a.id { swap(&a, &b) }  // a has the smaller id
        var exchanged: [PlayNote] = []
        func exchange(at t: Double) {
            let notes = a.sign(at: t) + b.sign(at: t)
            exchanged += notes
            for n in notes {
                a.ledger.take(n)
                b.ledger.take(n)
            }
        }
        // a alone from 0 to 10; b joins at 10; a leaves at 20; b leaves at 30.
        for step in 0...120 {
            let t = Double(step) * 0.25
            let aHere = t < 20, bHere = t >= 10
            a.view(aHere ? game : nil, at: t, others: bHere ? [b.id: game] : [:])
            b.view(bHere ? game : nil, at: t, others: aHere ? [a.id: game] : [:])
            exchange(at: t)
        }
        a.view(nil, at: 30.25)
        b.view(nil, at: 30.25)
        for n in a.sign(at: 31, all: true) + b.sign(at: 31, all: true) {
            a.ledger.take(n)
            b.ledger.take(n)
        }
        let seenByA = a.seconds(game, at: 40), seenByB = b.seconds(game, at: 40)
        #expect(seenByA == seenByB)
        #expect(seenByA.map { abs($0 - 30.25) <= 0.5 } == true, "together they played 30 s; counted \(String(describing: seenByA))")
        // Without the rule each would have counted its 20 s: 40 s in all.
        let allAuthentic = exchanged.allSatisfy { $0.isAuthentic }
        #expect(allAuthentic)
    }

    /// Sam plays a game whose creator chose Sam alone; Max watches. Max
    /// watching alone adds nothing, and Sam never yields to Max, whose id
    /// is the smaller: only players' viewing counts.
    @Test func aSpectatorsViewingAddsNoTime() {
        var (max, sam) = (Player(), Player())
        if sam.id < max.id { swap(&max, &sam) }  // the spectator has the smaller id
        max.ledger.setPlayers([sam.id], of: game)
        sam.ledger.setPlayers([sam.id], of: game)
        func exchange(at t: Double) {
            for n in max.sign(at: t) + sam.sign(at: t) {
                max.ledger.take(n)
                sam.ledger.take(n)
            }
        }
        // Max alone from 0 to 9 (he may not move; his viewer shows the game).
        for step in 0...36 {
            let t = Double(step) * 0.25
            max.view(game, at: t)
            sam.view(nil, at: t, others: [max.id: game])
            exchange(at: t)
        }
        #expect((sam.seconds(game, at: 9) ?? 0) == 0 && (max.seconds(game, at: 9) ?? 0) == 0, "the spectator's time counted")
        // Sam joins from 9 to 14 while Max still watches: Sam counts, not yielding to him.
        for step in 37...56 {
            let t = Double(step) * 0.25
            max.view(game, at: t, others: [sam.id: game])
            sam.view(game, at: t, others: [max.id: game])
            exchange(at: t)
        }
        sam.view(nil, at: 14.25)
        for n in sam.sign(at: 15, all: true) {
            max.ledger.take(n)
            sam.ledger.take(n)
        }
        let seen = sam.seconds(game, at: 20)
        #expect(seen.map { abs($0 - 5.25) <= 0.5 } == true, "Sam played 5 s; counted \(String(describing: seen))")
        #expect(max.seconds(game, at: 20) == seen)
        // A share Max's older release signed anyway is not added.
        var watcher = Player(identity: max.identity)
        watcher.view(game, at: 100)
        watcher.view(game, at: 110)
        for n in watcher.sign(at: 111, all: true) { sam.ledger.take(n) }
        #expect(sam.seconds(game, at: 120) == seen)
    }

    @Test func aPlayerWhoKeepsNoSharesIsNotYieldedTo() {
        let two = [SigningIdentity(), SigningIdentity()].sorted { $0.peerID < $1.peerID }
        var p = Player(identity: two[1])
        // A smaller id whose daemon keeps no shares (an older release) is present: this player still counts.
        let older = two[0].peerID
        p.view(game, at: 0, others: [older: game])
        p.view(game, at: 5, others: [older: game])
        #expect(p.seconds(game, at: 5) == 5)
    }

    @Test func aRestartKeepsTheSharesAndTheOpenPeriodEndsAtItsLastSignature() throws {
        var p = Player()
        p.view(game, at: 0)
        p.view(game, at: 3)
        let signed = p.sign(at: 3, all: true)
        // The daemon dies at 4 s; a new ledger reads the kept shares back.
        var restarted = PlayLedger(ownID: p.id)
        for n in signed { restarted.take(try PlayNote(decoding: n.encoded[...])) }
        #expect(restarted.playedMillis(game, now: 100) == 3_000)
        // Playing on appends a period after the three seconds kept.
        restarted.activity(in: game, now: 100, wall: p.wall(100))
        restarted.tick(ownGame: game, others: [:], now: 102, wall: p.wall(102))
        #expect(restarted.playedMillis(game, now: 102) == 5_000)
        let next = restarted.due(now: 102, wall: p.wall(102), all: true)
        #expect(next.first?.own.periods.count == 2)
        #expect(next.first.map { $0.serial > signed[0].serial } == true)
    }

    @Test func aShareFoldsOldPeriodsAndDecodingRefusesTooMany() throws {
        let identity = SigningIdentity()
        let periods = (0..<40).map { PlayPeriod(start: UInt64($0) * 10_000, length: UInt64($0) + 1) }
        let note = try #require(PlayNote(signing: identity, game: game.bytes, serial: 7, earlier: 5, periods: periods))
        #expect(note.periods.count == PlayNote.periodLimit)
        #expect(note.total == 5 + periods.reduce(0) { $0 + $1.length })
        #expect(note.isAuthentic)
        let decoded = try PlayNote(decoding: note.encoded[...])
        #expect(decoded == note && decoded.isAuthentic)
        guard case .play(let carried) = try PeerMessage(decoding: PeerMessage.play(note).encoded) else {
            Issue.record("a play message did not decode as one")
            return
        }
        #expect(carried == note)
        // A forged count of 33 periods, or a tampered length, is refused or unauthentic.
        var tooMany = identity.peerID.bytes + game.bytes + [7, 0, 33]
        for _ in 0..<33 { tooMany += [0, 1] }
        tooMany += [UInt8](repeating: 0, count: 64)
        #expect(throws: ByteDecodingError.self) { try PlayNote(decoding: tooMany[...]) }
        var tampered = note.encoded
        tampered[32 + 16 + 1 + 1 + 1 + 2] ^= 1
        #expect((try? PlayNote(decoding: tampered[...]))?.isAuthentic != true)
        // A share of another author's time for the same game is kept beside, not over, this one.
        var ledger = PlayLedger(ownID: SigningIdentity().peerID)
        let first = ledger.take(note), again = ledger.take(note)
        #expect(first && !again, "the same share is taken once")
        let second = try #require(PlayNote(signing: SigningIdentity(), game: game.bytes, serial: 1, earlier: 1_000, periods: []))
        let beside = ledger.take(second)
        #expect(beside)
        #expect(ledger.playedMillis(game, now: 0) == note.total + 1_000)
        #expect(ledger.playedMillis(other, now: 0) == nil)
    }
}
