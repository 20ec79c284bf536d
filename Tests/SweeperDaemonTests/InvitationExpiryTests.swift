import Foundation
import Logging
import SweeperCrypto
import SweeperNet
import SweeperStore
import Testing

@testable import SweeperDaemon

/// An invitation expires by the daemon's clock: moved by hand here, so
/// expiry is tested without waiting for it.
@Suite struct InvitationExpiryTests {
    @Test func anInvitationPastItsTimeIsRefusedAsExpired() throws {
        let directory = NSTemporaryDirectory() + "sweeper-invitations-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        defer { store.close() }
        let clock = ManualClock()
        let me = SigningIdentity()
        let members = CircleMembers(store: store, identity: me, firstKey: CircleKey(), clock: clock, logger: Logger(label: "test"))
        func request(_ secret: InvitationSecret, _ joining: PeerID) -> AdmissionRequest {
            AdmissionRequest(secret: secret, joining: joining, member: me.peerID)
        }
        // Made and used within its minute: admitted.
        let (first, expires) = try members.invite(for: .seconds(60))
        #expect(expires == clock.wallMillis + 60_000, "the invitation's time is not the daemon's clock")
        let early = SigningIdentity().peerID
        clock.advance(by: .seconds(59))
        guard case .admitted = members.admit(request(first, early), from: early) else {
            Issue.record("an invitation within its time was refused")
            return
        }
        // Made, then used a second past its minute: refused, expired.
        let (second, _) = try members.invite(for: .seconds(60))
        clock.advance(by: .seconds(61))
        let late = SigningIdentity().peerID
        #expect(members.admit(request(second, late), from: late) == .refused(.expired))
    }
}
