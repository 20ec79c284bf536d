import Logging
import NIOEmbedded
import SweeperCrypto
import SweeperMessages
import SweeperSync
import Testing

@testable import SweeperDaemon
@testable import SweeperNet

/// Anti-entropy's pace: each link compares summaries once an interval, by
/// whichever side looks first, and a node of many links compares each less
/// often, so that an idle classroom is not a stream of summaries.
@Suite struct AntiEntropyTests {
    /// `count` links, each with its session open, and the sessions' owner on a clock the test moves.
    struct Links {
        let clock = ManualClock()
        let sessions: SyncSessions
        let links: [NoteGossipTests.TestLink]
        let replica = Replica(circle: CircleKey())

        init(_ count: Int) throws {
            let registry = LinkRegistry()
            sessions = SyncSessions(
                ownID: SigningIdentity().peerID, links: registry, eventLoop: EmbeddedEventLoop(), clock: clock, logger: Logger(label: "test"))
            links = (0..<count).map { NoteGossipTests.TestLink(UInt64($0 + 1), to: SigningIdentity().peerID) }
            for link in links {
                registry.add(link.link)
                sessions.open(link.link.handle, interest: .everything, replica: replica)
                _ = try link.sent()
            }
        }

        /// Ticks at the clock's time now; which links were sent a summary.
        func tick() throws -> [Bool] {
            sessions.tick(replica: replica, every: 5)
            return try links.map { try !$0.sent().filter { if case .sync = $0 { true } else { false } }.isEmpty }
        }
    }

    @Test func eachLinkComparesOnceAnIntervalByWhicheverSideLooksFirst() throws {
        let l = try Links(2)
        #expect(try l.tick() == [true, true])
        // The first link's peer looked first this time: its summary came at 3 s.
        l.clock.advance(by: .seconds(3))
        l.sessions.session(of: l.links[0].link)?.lastSummary = l.clock.seconds
        l.clock.advance(by: .seconds(2))
        #expect(try l.tick() == [false, true], "a summary heard 2 s ago is this interval's exchange")
        l.clock.advance(by: .seconds(5))
        #expect(try l.tick() == [true, true])
    }

    @Test func aNodeOfManyLinksComparesEachLessOften() throws {
        #expect(SyncSessions.antiEntropyInterval(links: 5, tick: 5) == 5)
        #expect(SyncSessions.antiEntropyInterval(links: 31, tick: 5) == 31)
        let l = try Links(31)
        // Links that came up together: their exchanges spread over the interval, some 5 a tick of 5 s.
        var rounds: [[Bool]] = []
        for _ in 0..<14 {
            rounds.append(try l.tick())
            l.clock.advance(by: .seconds(5))
        }
        let perTick = rounds.map { $0.filter { $0 }.count }
        #expect(perTick.allSatisfy { $0 <= 6 }, "summaries a tick: \(perTick)")
        // Each link compares once in 31 s (or a tick late), never twice.
        for i in 0..<31 {
            let ticks = rounds.indices.filter { rounds[$0][i] }
            let gaps = zip(ticks, ticks.dropFirst()).map { $1 - $0 }
            #expect(ticks.first ?? 99 <= 6 && gaps.allSatisfy { $0 == 6 || $0 == 7 }, "link \(i) compared at ticks \(ticks)")
        }
    }
}
