import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// What one peer message may cost the thread that handles it in waking
/// sleeping games: a member's valid ops wake games while the message's
/// budget of ops read back lasts; past it, their games stay asleep, are
/// named for waking elsewhere, and the ops are refused until asked again.
@Suite struct WakeBudgetTests {
    let circle = Fixtures.circle(7)
    let alice = Fixtures.identity(1)
    let bob = Fixtures.identity(2)

    /// Six games of five ops each (Alice's genesis, Bob's four flags), all
    /// asleep, as the check-before-waking tests hold them.
    func sleepingGames() throws -> (Replica, Simulation.SimulatedDisk, [GameID]) {
        try CheckBeforeWakingTests().sleepingGames()
    }

    /// Bob's fifth op of each game, validly signed.
    func nextOps(_ replica: Replica, _ ids: [GameID]) throws -> [Op] {
        let forge = Forge(circle: circle)
        return try ids.map { id in
            let previous = try #require(replica.hash(in: id, author: bob.peerID, seq: 4))
            return forge.op(bob, game: id, seq: 5, lamport: 60, previous: previous, payload: .mark(cell: 1, mark: .flag))
        }
    }

    @Test func gamesPastTheBudgetStayAsleepAndAreWokenElsewhere() throws {
        var (replica, disk, ids) = try sleepingGames()
        let ops = try nextOps(replica, ids)
        let read = disk.opsReadBack
        replica.wakeBudget = 12
        var outcome = InsertOutcome()
        for op in ops { outcome.merge(replica.insert(op)) }
        // Two games of five ops fit in twelve: the four others wait.
        #expect(outcome.accepted.map(\.gameID) == Array(ids.prefix(2)))
        #expect(outcome.rejected.map(\.reason) == Array(repeating: .wakeDeferred, count: 4))
        #expect(disk.opsReadBack - read == 10, "read back \(disk.opsReadBack - read) ops")
        #expect(replica.sleeping.count == 4 && replica.wakeBudget == 2)
        #expect(replica.rejectionCounts[.wakeDeferred] == 4 && replica.archiveFaults == 0)
        let deferred = replica.takeDeferredWakes()
        #expect(deferred == Set(ids.dropFirst(2)) && replica.deferredWakes.isEmpty)

        // Woken elsewhere and put in; the refused ops go in when they come again.
        replica.wakeBudget = nil
        for id in deferred.sorted() {
            let job = try #require(replica.wakeJob(for: id))
            #expect(job.opCount == 5)
            let woken = try #require(job.run())
            let installed = replica.install(woken, from: job)
            #expect(installed)
        }
        #expect(replica.sleeping.isEmpty)
        for op in ops.dropFirst(2) {
            let again = replica.insert(op)
            #expect(again.accepted.count == 1)
        }
        for id in ids { #expect(replica.games[id]?.vector[bob.peerID] == 5) }
    }

    @Test func aGameChangedMeanwhileIsNotReplaced() throws {
        var (replica, disk, ids) = try sleepingGames()
        let op = try nextOps(replica, [ids[0]])[0]
        let job = try #require(replica.wakeJob(for: ids[0]))
        let stale = try #require(job.run())
        // Woken on the way by a player's move, and changed.
        let moved = replica.insert(op)
        #expect(moved.accepted.count == 1)
        let replaced = replica.install(stale, from: job)
        #expect(!replaced)
        #expect(replica.games[ids[0]]?.vector[bob.peerID] == 5, "the stale game replaced the changed one")
        // Asleep again with the new op: a job of before no longer fits it.
        disk["\(op.gameID) \(op.author) \(op.seq)"] = (op, false)
        replica.noteStored([op])
        let slept = replica.sleep(ids[0])
        #expect(slept)
        let again = replica.install(stale, from: job)
        #expect(!again)
        #expect(replica.sleeping[ids[0]] != nil)
    }

    @Test func aCatchUpPastTheBudgetIsReadElsewhereAndArrivesWhole() throws {
        var (replica, disk, ids) = try sleepingGames()
        var session = SyncSession()
        let read = disk.opsReadBack
        replica.wakeBudget = 12
        // A new device's summary: it holds none of the six games.
        let step = session.receive(.summary([:], wantsReply: true), replica: &replica)
        replica.wakeBudget = nil
        // The two games' ops, and those of their chains that left memory again as they were sent: not the thirty of all six.
        #expect(disk.opsReadBack - read <= 20, "read back \(disk.opsReadBack - read) ops on the way")
        #expect(step.catchUps.map(\.game) == Array(ids.dropFirst(2)))
        #expect(replica.sleeping.count == 6, "a catch-up woke a game")
        var replies = step.replies
        for catchUp in step.catchUps {
            let woken = try #require(replica.wakeJob(for: catchUp.game)?.run())
            replies += session.carrying(catchUp.segments(of: woken), replica: replica)
        }
        var newcomer = Replica(circle: circle)
        var theirs = SyncSession()
        for message in replies { _ = theirs.receive(message, replica: &newcomer) }
        #expect(newcomer.knownGames == Set(ids))
        for id in ids { #expect(newcomer.games[id]?.vector == replica.sleeping[id]?.vector) }
    }

    @Test func headChecksOfSignedChainsStopAtTheBudget() throws {
        var (replica, disk, ids) = try sleepingGames()
        func sendHeads() {
            var session = SyncSession()
            session.peer = alice.peerID
            // Bob's chains, signed already, with signatures that are not his.
            let heads = ids.map { HeadSignature(game: .new($0), author: bob.peerID, seq: 4, signature: alice.sign([4])) }
            let step = session.receive(.heads(heads), replica: &replica)
            #expect(step.violation == nil)
        }
        // Without a budget each is checked against its op read back: the attempt happens.
        var read = disk.opsReadBack
        sendHeads()
        #expect(disk.opsReadBack - read == 6 && replica.rejectionCounts[.badSignature] == 6)
        // With a budget of two reads, two are checked; the rest change nothing either way.
        read = disk.opsReadBack
        replica.wakeBudget = 2 * Replica.opReadBackCost
        sendHeads()
        #expect(disk.opsReadBack - read == 2 && replica.rejectionCounts[.badSignature] == 8)
        #expect(replica.sleeping.count == 6 && replica.wakeBudget == 0)
    }
}

/// An author the owner finds over its daily quota has its new ops refused
/// in every way they come (an op, a segment, a game awake or asleep),
/// without a game woken; those held stay, and once let out it writes again.
@Suite struct DailyQuotaTests {
    @Test func anAuthorOverItsQuotaIsRefusedEverywhereUntilLetOut() throws {
        let suite = WakeBudgetTests()
        var (replica, disk, ids) = try suite.sleepingGames()
        let ops = try suite.nextOps(replica, ids)
        let bob = suite.bob.peerID
        // The attempt happens: Bob's op goes in while he is under it.
        let first = replica.insert(ops[0])
        #expect(first.accepted.count == 1)
        replica.overDailyQuota = [bob]
        let read = disk.opsReadBack
        let asleep = replica.insert(ops[1])
        let segment = try #require(OpSegment(verifiedOps: [ops[2]]))
        let asSegment = replica.insert(segment)
        #expect(asleep.rejected.map(\.reason) == [.overDailyQuota] && asSegment.rejected.map(\.reason) == [.overDailyQuota])
        #expect(disk.opsReadBack == read && replica.games[ids[1]] == nil && replica.games[ids[2]] == nil, "a game woke for an author over quota")
        // Awake, too: its game woken by another's need.
        replica.wake(ids[3])
        let awake = replica.insert(ops[3])
        #expect(awake.rejected.map(\.reason) == [.overDailyQuota])
        #expect(replica.games[ids[0]]?.vector[bob] == 5, "an op held was dropped")
        replica.overDailyQuota = []
        let again = replica.insert(ops[3])
        #expect(again.accepted.count == 1)
        #expect(replica.rejectionCounts[.overDailyQuota] == 3)
    }
}
