import SweeperCrypto
import SweeperMembership
import SweeperNet
import Testing

@testable import SweeperDaemon

/// Whoever answers an invitation cannot define the circle for the joining
/// device: the code names the circle's root, and an answer rooted in
/// another founding (one a holder of the circle key signs for itself) is
/// refused, while the real member's answer is taken.
@Suite(.serialized) struct JoinRootTests {
    /// Mallory holds the circle key: it founds a circle of its own under it
    /// and admits `joining` there, as its answer to the invitation would.
    static func forgedAnswer(circle: CircleKey, joining: PeerID) throws -> [[UInt8]] {
        let mallory = SigningIdentity()
        var forged = CircleMembership(firstKey: circle)
        try forged.record(.found(proof: circle.membershipProof(for: mallory.peerID)), by: mallory, atMillis: 1)
        let key = SigningIdentity().peerID
        try forged.record(.invite(key: key, expiresMillis: .max), by: mallory, atMillis: 2)
        try forged.record(.admit(subject: joining, invitation: key, name: "", through: 0), by: mallory, atMillis: 3)
        return forged.encodedRecords
    }

    @Test func anAnswerRootedElsewhereIsRefusedAndTheRealOneTaken() async throws {
        let ada = try await DaemonFixture()
        let joiner = try await DaemonFixture()
        let unpinned = try await DaemonFixture()
        defer {
            Task {
                await ada.cleanup()
                await joiner.cleanup()
                await unpinned.cleanup()
            }
        }
        let members = ada.core.router.members
        let root = try #require(members.rootCommitment)
        let made = try members.invite(for: .seconds(3_600))
        let code = InviteCode.encode(made.secret, root: root)
        guard case .pinned(_, let pinned) = try InviteCode.read(code) else {
            Issue.record("the code does not name its root")
            return
        }
        let joining = joiner.core.router.signer.peerID
        // The attack works where nothing is pinned: the forged founder is taken.
        let forgedForUnpinned = try Self.forgedAnswer(circle: ada.circle, joining: unpinned.core.router.signer.peerID)
        _ = try unpinned.core.router.members.adopt(records: forgedForUnpinned, keys: [ada.circle])
        #expect(unpinned.core.router.members.view.founder != ada.core.router.signer.peerID)
        // Pinned, the forged answer is refused …
        #expect(throws: CircleMembers.AdoptionError.otherRoot) {
            try joiner.core.router.members.adopt(records: try Self.forgedAnswer(circle: ada.circle, joining: joining), keys: [ada.circle], root: pinned)
        }
        // … and the real member's answer is taken.
        let request = AdmissionRequest(secret: made.secret, joining: joining, member: ada.core.router.signer.peerID)
        guard case .admitted(let messages, let keys) = members.admit(request, from: joining) else {
            Issue.record("the member did not admit")
            return
        }
        _ = try joiner.core.router.members.adopt(records: PeerNetwork.membershipRecords(messages), keys: keys, root: pinned)
        #expect(joiner.core.router.members.view.founder == ada.core.router.signer.peerID)
        #expect(joiner.core.router.members.view.isMember(joining))
    }
}
