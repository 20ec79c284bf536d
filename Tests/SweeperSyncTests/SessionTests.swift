import SweeperConventions
import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// Two sessions wired back to back, messages delivered in order through their encodings.
struct Pair {
    var replicas: [Replica]
    var sessions = [SyncSession(), SyncSession()]
    var inbox: [[SyncMessage]] = [[], []]
    var delivered = 0

    init(_ a: Replica, _ b: Replica) { replicas = [a, b] }

    mutating func start() {
        for i in 0..<2 { inbox[1 - i] += sessions[i].start(replica: replicas[i]) }
    }

    /// Delivers until both inboxes are empty; returns the ops each side accepted.
    mutating func run() throws -> [[Op]] {
        var accepted: [[Op]] = [[], []]
        while let i = (0..<2).first(where: { !inbox[$0].isEmpty }) {
            let message = try SyncMessage(decoding: inbox[i].removeFirst().encoded)
            delivered += 1
            let step = sessions[i].receive(message, replica: &replicas[i])
            accepted[i] += step.outcome.accepted
            inbox[1 - i] += step.replies
        }
        return accepted
    }

    /// Side `i` made or accepted `ops`: push them to the other side.
    mutating func push(_ ops: [Op], from i: Int) {
        inbox[1 - i] += sessions[i].push(ops, replica: replicas[i])
    }
}

@Suite struct SessionTests {
    @Test func catchUpThenPushThenNothingMore() throws {
        let world = try OpWorld.make(seed: 31, steps: 80)
        var pair = Pair(world.replicas[0], Replica(circle: world.circle))
        pair.start()
        let first = try pair.run()
        #expect(first[1].count == world.replicas[0].games[world.gameID]?.opCount)
        #expect(first[0].isEmpty)
        #expect(pair.replicas[1].state(of: world.gameID)?.digest == world.replicas[0].state(of: world.gameID)?.digest)

        // A new move on side 1 is pushed to side 0, and not echoed back.
        let author = OpAuthor(identity: Fixtures.identity(9), circle: world.circle)
        let game = try #require(pair.replicas[1].games[world.gameID])
        let op = try #require(try author.peek(in: game, atMillis: 5))
        let local = pair.replicas[1].insert(op)
        pair.push(local.accepted, from: 1)
        let second = try pair.run()
        #expect(second[0].map(\.hash) == [op.hash])
        pair.push(second[0], from: 0)
        #expect(pair.inbox[1].isEmpty, "an op is not sent back to the peer it came from")

        // A periodic summary between equal replicas asks for nothing and gets no reply.
        pair.inbox[1] += pair.sessions[0].tick(replica: pair.replicas[0])
        let before = pair.delivered
        _ = try pair.run()
        #expect(pair.delivered == before + 1)
    }

    @Test func bothSidesGetWhatTheOtherHas() throws {
        let world = try OpWorld.make(seed: 12, steps: 120)
        // Each side holds a different author's ops (plus the genesis).
        var pair = Pair(world.replicas[1], world.replicas[2])
        pair.start()
        _ = try pair.run()
        var union = Replica(circle: world.circle)
        union.restore((world.replicas[1].games[world.gameID]?.everyOp ?? []) + (world.replicas[2].games[world.gameID]?.everyOp ?? []))
        for r in pair.replicas {
            #expect(r.summary == union.summary)
            #expect(r.state(of: world.gameID)?.digest == union.state(of: world.gameID)?.digest)
        }
    }

    @Test func lostMessagesAreRepairedByTheNextSummary() throws {
        let world = try OpWorld.make(seed: 3, steps: 60)
        var pair = Pair(world.replicas[0], Replica(circle: world.circle))
        pair.start()
        // Both opening summaries are lost.
        pair.inbox = [[], []]
        _ = try pair.run()
        #expect(pair.replicas[1].state(of: world.gameID) == nil)
        pair.inbox[0] += pair.sessions[1].tick(replica: pair.replicas[1])
        _ = try pair.run()
        #expect(pair.replicas[1].summary == world.replicas[0].summary)
    }

    @Test func newGamesComeFromTheGenerator() throws {
        let circle = Fixtures.circle(8)
        let author = OpAuthor(identity: Fixtures.identity(8), circle: circle)
        let parameters = try GameParameters(preset: .intermediate, noGuess: true)
        let a = try author.newGame(parameters, seed: 99, questionMarks: true, createdAtMillis: 1)
        let b = try author.newGame(parameters, seed: 99, questionMarks: true, createdAtMillis: 1)
        #expect(a.gameID == b.gameID)
        guard case .genesis(let g) = a.payload else {
            Issue.record("not a genesis")
            return
        }
        #expect(g.layout == (try Generator.generate(parameters, seed: 99)).layout)
        #expect(g.parameters.noGuess && g.questionMarks && g.seed == 99)
        var replica = Replica(circle: circle)
        #expect(replica.insert(a).accepted.count == 1)
    }

    @Test func undecodableBytesAreCountedAndThrown() {
        var replica = Replica(circle: Fixtures.circle(1))
        var session = SyncSession()
        #expect(throws: ByteDecodingError.self) { _ = try session.receive(encoded: [1, 1, 5], replica: &replica) }
        #expect(replica.rejectionCounts[.malformed] == 1)
    }
}
