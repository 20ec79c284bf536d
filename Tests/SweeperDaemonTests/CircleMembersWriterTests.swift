import Foundation
import Logging
import SweeperCrypto
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

    @Test func theViewIsReadWhileAPeersRecordsAreTaken() throws {
        let directory = NSTemporaryDirectory() + "sweeper-members-writer-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        defer { store.close() }
        let clock = GateClock()
        let me = SigningIdentity()
        let members = CircleMembers(store: store, identity: me, firstKey: CircleKey(), clock: clock, logger: Logger(label: "test"))
        #expect(members.view.isMember(me.peerID), "the circle was not founded")

        // A writer takes records (its own founding, as a peer would send it
        // back) and stops inside its work, holding its turn.
        let records = members.encodedRecords
        clock.arm()
        let writerDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? members.take(records)
            writerDone.signal()
        }
        #expect(clock.entered.wait(timeout: .now() + 10) == .success, "the writer never reached its work")

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
}
