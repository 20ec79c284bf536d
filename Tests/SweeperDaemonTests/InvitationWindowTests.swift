import SweeperCrypto
import Testing

@testable import SweeperDaemon

/// Which invitations a member accepts the handshake of: a member in bad
/// faith that makes many invitations dated far ahead crowds out nobody
/// else's.
@Suite struct InvitationWindowTests {
    @Test func aMakersClockOrdersOnlyItsOwnInvitations() {
        let mallory = SigningIdentity().peerID, mum = SigningIdentity().peerID
        let now: UInt64 = 1_800_000_000_000
        let flood = (0..<100).map { i in (key: SigningIdentity().peerID, madeBy: mallory, madeMillis: now + 1_000_000_000 + UInt64(i)) }
        let mums = (0..<3).map { i in (key: SigningIdentity().peerID, madeBy: mum, madeMillis: now + UInt64(i)) }
        let accepted = Set(CircleMembers.accepted(flood + mums))
        // Mum's three are all accepted: the flood, dated ahead, did not push them out.
        #expect(Set(mums.map(\.key)).isSubset(of: accepted))
        // Of Mallory's hundred, only its newest few.
        let newest = Set(flood.sorted { $0.madeMillis > $1.madeMillis }.prefix(CircleMembers.invitationsPerMaker).map(\.key))
        #expect(accepted.subtracting(mums.map(\.key)) == newest)
        #expect(accepted.count == 3 + CircleMembers.invitationsPerMaker)
    }
}
