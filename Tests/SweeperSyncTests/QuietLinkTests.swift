import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// Anti-entropy on a quiet link (`SyncSession.tick`): a link where
/// nothing changed and both sides said they hold the same skips its
/// summary, one in `quietTickLimit` aside; a change, or a peer that has
/// not said it holds what it was sent, sends it at the next tick.
@Suite struct QuietLinkTests {
    let circle = Fixtures.circle(4)
    let alice = OpAuthor(identity: Fixtures.identity(1), circle: Fixtures.circle(4))

    /// Summaries among `messages`.
    func summaries(_ messages: [SyncMessage]) -> Int {
        messages.filter { if case .summary = $0 { true } else { false } }.count
    }

    /// Two replicas of one game, linked and in sync.
    func linkedPair() throws -> (Pair, GameID) {
        let genesis = try Fixtures.genesis(by: alice, seed: 5)
        var replicas = [Replica(circle: circle), Replica(circle: circle)]
        for i in 0..<2 { replicas[i].insert(genesis) }
        var pair = Pair(replicas[0], replicas[1])
        pair.start()
        _ = try pair.run()
        return (pair, genesis.gameID)
    }

    /// Ticks side `i` `n` times, delivering everything after each; returns
    /// how many summaries it sent.
    func tick(_ pair: inout Pair, side i: Int, times n: Int) throws -> Int {
        var sent = 0
        for _ in 0..<n {
            let out = pair.sessions[i].tick(replica: pair.replicas[i])
            sent += summaries(out)
            pair.inbox[1 - i] += out
            _ = try pair.run()
        }
        return sent
    }

    @Test func aQuietLinkSendsOneSummaryInQuietTickLimit() throws {
        var (pair, _) = try linkedPair()
        let ticks = 4 * SyncSession.quietTickLimit
        #expect(try tick(&pair, side: 0, times: ticks) == ticks / SyncSession.quietTickLimit)
        #expect(try tick(&pair, side: 1, times: ticks) == ticks / SyncSession.quietTickLimit)
        // Asked outright, a side sends its summary whatever the link.
        #expect(summaries(pair.sessions[0].summaryAgain(replica: pair.replicas[0])) == 1)
    }

    @Test func aChangeOnEitherSideSendsTheSummaryAtTheNextTick() throws {
        var (pair, id) = try linkedPair()
        #expect(try tick(&pair, side: 0, times: 2) == 0)
        // Alice flags a cell: her summary changed, and goes at her next tick.
        let game = try #require(pair.replicas[0].games[id])
        let cell = try #require((0..<81).first { !(game.state?.board.isRevealed($0) ?? true) })
        let op = try #require(try alice.setMark(.flag, on: cell, in: game, atMillis: 1_790_000_001_000))
        pair.replicas[0].insert(op)
        pair.push([op], from: 0)
        _ = try pair.run()
        #expect(pair.replicas[1].games[id]?.opCount == 2)
        #expect(try tick(&pair, side: 0, times: 1) == 1)
        // Bob took it: his summary changed, and goes at his; then both are quiet again.
        #expect(try tick(&pair, side: 1, times: 1) == 1)
        #expect(try tick(&pair, side: 0, times: 2) == 0)
        #expect(try tick(&pair, side: 1, times: 2) == 0)
    }

    @Test func anOpThePeerNeverTookKeepsTheLinkTalkingUntilItHasIt() throws {
        var (pair, id) = try linkedPair()
        // Alice sends a summary of a game with a move Bob never got (its push lost with a link, or refused).
        let game = try #require(pair.replicas[0].games[id])
        let cell = try #require((0..<81).first { !(game.state?.board.isRevealed($0) ?? true) })
        let op = try #require(try alice.setMark(.flag, on: cell, in: game, atMillis: 1_790_000_001_000))
        pair.replicas[0].insert(op)
        _ = pair.sessions[0].push([op], replica: pair.replicas[0])
        #expect(summaries(pair.sessions[0].tick(replica: pair.replicas[0])) == 1, "changed: sent")
        // That summary was lost too: Alice's summary is the one she sent, but Bob never said he holds the move.
        #expect(pair.replicas[1].games[id]?.opCount == 1)
        let out = pair.sessions[0].tick(replica: pair.replicas[0])
        #expect(summaries(out) == 1, "Bob has not said he holds it: sent again")
        pair.inbox[1] += out
        _ = try pair.run()
        #expect(pair.replicas[1].games[id]?.opCount == 2, "the summary brought it")
        #expect(try tick(&pair, side: 1, times: 1) == 1)
        #expect(try tick(&pair, side: 0, times: 2) == 0, "both say they hold it: quiet")
    }
}
