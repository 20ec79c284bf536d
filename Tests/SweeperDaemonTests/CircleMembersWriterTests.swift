import Foundation
import Logging
import NIOCore
import NIOPosix
import SweeperCrypto
import SweeperEventLoop
import SweeperStore
import Synchronization
import Testing

@testable import SweeperDaemon

/// The event loop reads the circle's view with every note a peer sends;
/// taking a peer's records (off the loop, tens of milliseconds in a full
/// circle) must not hold that read up.
@Suite struct CircleMembersWriterTests {
    /// A wall clock that, once armed, holds the next reader of the time
    /// (the writer, mid-insert) until the test lets it go.
    final class GateClock: DaemonClock {
        private let armed = Mutex(false)
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)

        func arm() { armed.withLock { $0 = true } }

        var seconds: Double { 0 }
        var wallMillis: UInt64 {
            if armed.withLock({ armed in
                defer { armed = false }
                return armed
            }) {
                entered.signal()
                _ = release.wait(timeout: .now() + 10)
            }
            return 1_795_000_000_000
        }
        func sleep(for duration: Duration) async throws {}
    }

    /// A circle founded here, and a writer (a peer's records going in:
    /// its own founding, as a peer would send it back) stopped inside its
    /// work, holding its turn until `clock.release` is signalled.
    struct Held {
        let members: CircleMembers
        let clock = GateClock()
        let me = SigningIdentity()
        let writerDone = DispatchSemaphore(value: 0)
        private let store: Store
        private let directory = NSTemporaryDirectory() + "sweeper-members-writer-\(UInt32.random(in: 0...UInt32.max))"

        init() throws {
            store = try Store(directory: directory)
            members = CircleMembers(store: store, identity: me, firstKey: CircleKey(), clock: clock, logger: Logger(label: "test"))
            #expect(members.view.isMember(me.peerID), "the circle was not founded")
            let records = members.encodedRecords
            clock.arm()
            let (members, writerDone) = (members, writerDone)
            Thread.detachNewThread {
                _ = try? members.take(records)
                writerDone.signal()
            }
            #expect(clock.entered.wait(timeout: .now() + 10) == .success, "the writer never reached its work")
        }

        func close() {
            store.close()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    @Test func theViewIsReadWhileAPeersRecordsAreTaken() throws {
        let held = try Held()
        defer { held.close() }
        let (members, clock, me, writerDone) = (held.members, held.clock, held.me, held.writerDone)

        // Meanwhile a reader gets the view at once.
        let read = DispatchSemaphore(value: 0)
        let seen = Mutex(false)
        Thread.detachNewThread {
            let member = members.view.isMember(me.peerID)
            seen.withLock { $0 = member }
            read.signal()
        }
        let answered = read.wait(timeout: .now() + 2) == .success
        clock.release.signal()
        #expect(answered, "reading the view waited for the writer's work")
        #expect(seen.withLock { $0 })
        #expect(writerDone.wait(timeout: .now() + 10) == .success, "the writer never finished")
        #expect(members.view.isMember(me.peerID))
    }

    /// A change made here (an invitation, from a control request on the
    /// event loop) waits for the writer under way on a thread of the pool:
    /// the loop goes on meanwhile.
    @Test func aChangeMadeHereWaitsOffTheLoop() async throws {
        let held = try Held()
        defer { held.close() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let members = held.members
        let invited = Task(executorPreference: EventLoopTaskExecutor(loop)) {
            try await members.offLoop { try members.invite(for: .seconds(60)) }
        }
        // The loop answers while the invitation waits for its turn.
        let answered = try await loop.submit { true }.get()
        #expect(answered)
        #expect(members.view.invitations.isEmpty, "the invitation went in before the writer under way was done")
        held.clock.release.signal()
        _ = try await invited.value
        #expect(members.view.invitations.count == 1)
        #expect(held.writerDone.wait(timeout: .now() + 10) == .success)
        try await group.shutdownGracefully()
    }
}
