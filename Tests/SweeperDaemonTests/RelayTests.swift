import SweeperCrypto
import SweeperGame
import SweeperSync
import Testing

@testable import SweeperDaemon

/// Which ops a daemon pushes to a peer, given whom that peer says it is linked to.
@Suite struct RelayTests {
    @Test func anotherAuthorsOpsSkipPeersLinkedToThatAuthor() throws {
        let circle = CircleKey()
        let (ann, bob, cat) = (SigningIdentity(), SigningIdentity(), SigningIdentity())
        let generated = try Generator.generate(try GameParameters(preset: .beginner), seed: 9)
        let ops = try [ann, bob, cat].map { who in
            try OpAuthor(identity: who, circle: circle).genesis(
                parameters: generated.parameters, layout: generated.layout, seed: 9, questionMarks: false, createdAtMillis: 1_000)
        }
        let dan = SigningIdentity().peerID
        // A peer that has not said (or cannot say) whom it is linked to gets everything.
        #expect(SyncSessions.relayed(ops, to: dan, linkedTo: [], ownID: ann.peerID) == ops)
        // Linked to us and to bob: our op, and cat's, whom it does not reach itself.
        #expect(SyncSessions.relayed(ops, to: dan, linkedTo: [ann.peerID, bob.peerID], ownID: ann.peerID) == [ops[0], ops[2]])
        // Linked to cat only: everything but cat's.
        #expect(SyncSessions.relayed(ops, to: dan, linkedTo: [cat.peerID], ownID: ann.peerID) == [ops[0], ops[1]])
        // Our own ops always go, even to a peer that lists us.
        #expect(SyncSessions.relayed([ops[0]], to: dan, linkedTo: [ann.peerID, bob.peerID, cat.peerID], ownID: ann.peerID) == [ops[0]])
        // An author is never sent its own ops back, whatever it says it is linked to.
        #expect(SyncSessions.relayed(ops, to: bob.peerID, linkedTo: [], ownID: ann.peerID) == [ops[0], ops[2]])
        #expect(SyncSessions.relayed(ops, to: cat.peerID, linkedTo: [ann.peerID], ownID: ann.peerID) == [ops[0], ops[1]])
    }
}
