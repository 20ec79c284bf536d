import Testing

@testable import SweeperCrypto

/// Runs a handshake between two parties, optionally tampering with each
/// message on the way; returns both results or the first error.
private func handshake(
    client clientCircle: CircleKey, _ clientID: SigningIdentity,
    server serverCircle: CircleKey, _ serverID: SigningIdentity,
    expecting expected: PeerID? = nil,
    tamper: (Int, inout [UInt8]) -> Void = { _, _ in }
) throws -> (client: HandshakeResult, server: HandshakeResult) {
    var client = SecretHandshake(role: .client, circle: clientCircle, identity: clientID, expectedPeer: expected)
    var server = SecretHandshake(role: .server, circle: serverCircle, identity: serverID)
    guard var m1 = client.start() else { throw HandshakeError.outOfTurn }
    tamper(1, &m1)
    guard case .send(var m2) = try server.receive(m1) else { throw HandshakeError.outOfTurn }
    tamper(2, &m2)
    guard case .send(var m3) = try client.receive(m2) else { throw HandshakeError.outOfTurn }
    tamper(3, &m3)
    guard case .finish(let reply, let serverResult) = try server.receive(m3), var m4 = reply else { throw HandshakeError.outOfTurn }
    tamper(4, &m4)
    guard case .finish(nil, let clientResult) = try client.receive(m4) else { throw HandshakeError.outOfTurn }
    return (clientResult, serverResult)
}

@Suite struct SecretHandshakeTests {
    let circle = CircleKey()
    let alice = SigningIdentity()
    let bob = SigningIdentity()

    @Test func membersLearnEachOtherAndShareDirectionalKeys() throws {
        let (c, s) = try handshake(client: circle, alice, server: circle, bob, expecting: bob.peerID)
        #expect(c.peer == bob.peerID)
        #expect(s.peer == alice.peerID)
        #expect(c.sendKey == s.receiveKey)
        #expect(c.receiveKey == s.sendKey)
        #expect(c.sendKey != c.receiveKey)
        // The keys carry a secret stream both ways.
        let out = SecretStreamSender(key: c.sendKey)
        let into = try SecretStreamReceiver(key: s.receiveKey, header: out.header)
        #expect(try into.open(out.seal(Array("hello".utf8))) == Array("hello".utf8))
    }

    @Test func everySessionHasFreshKeys() throws {
        let first = try handshake(client: circle, alice, server: circle, bob)
        let second = try handshake(client: circle, alice, server: circle, bob)
        #expect(first.client.sendKey != second.client.sendKey)
    }

    @Test func anOutsiderIsRefusedAtTheFirstMessage() {
        #expect(throws: HandshakeError.notInCircle) { try handshake(client: CircleKey(), alice, server: circle, bob) }
        // And a server of another circle is refused by the client at message 2.
        #expect(throws: HandshakeError.notInCircle) {
            let other = CircleKey()
            var stranger = SecretHandshake(role: .client, circle: other, identity: bob)
            var strangerServer = SecretHandshake(role: .server, circle: other, identity: bob)
            guard let m1 = stranger.start(), case .send(let m2) = try strangerServer.receive(m1) else { return }
            var client = SecretHandshake(role: .client, circle: circle, identity: alice)
            _ = client.start()
            _ = try client.receive(m2)
        }
    }

    @Test func theDialledPeerMustBeTheOneExpected() {
        let carol = SigningIdentity()
        #expect(throws: HandshakeError.unexpectedPeer(bob.peerID)) {
            try handshake(client: circle, alice, server: circle, bob, expecting: carol.peerID)
        }
    }

    @Test(arguments: [1, 2, 3, 4])
    func aTamperedMessageFails(message: Int) {
        #expect(throws: HandshakeError.self) {
            try handshake(client: circle, alice, server: circle, bob) { n, bytes in
                if n == message { bytes[bytes.count / 2] ^= 0x40 }
            }
        }
    }

    @Test func wrongLengthsAreNamed() {
        #expect(throws: HandshakeError.wrongLength(message: 1, expected: 64, actual: 3)) {
            try handshake(client: circle, alice, server: circle, bob) { n, bytes in if n == 1 { bytes = [1, 2, 3] } }
        }
    }

    @Test func aRecordedIdentityProofCannotBeReplayed() throws {
        // Record message 3 of one session, then replay it into a new server session.
        var recorded: [UInt8] = []
        _ = try handshake(client: circle, alice, server: circle, bob) { n, bytes in if n == 3 { recorded = bytes } }
        var client = SecretHandshake(role: .client, circle: circle, identity: SigningIdentity())
        var server = SecretHandshake(role: .server, circle: circle, identity: bob)
        guard let m1 = client.start() else { Issue.record("no message 1"); return }
        _ = try server.receive(m1)
        #expect(throws: HandshakeError.badIdentityProof) { _ = try server.receive(recorded) }
    }

    @Test func talkingToItselfIsRefused() {
        #expect(throws: HandshakeError.connectedToSelf) { try handshake(client: circle, alice, server: circle, alice) }
    }

    @Test func streamRefusesReplayedReorderedAndTamperedFrames() throws {
        let key = SecretBytes(randomCount: 32)
        let out = SecretStreamSender(key: key)
        let f1 = out.seal([1]), f2 = out.seal([2]), f3 = out.seal([3])
        let a = try SecretStreamReceiver(key: key, header: out.header)
        #expect(try a.open(f1) == [1])
        #expect(throws: SecretStreamError.forged) { try a.open(f1) }  // replayed
        let b = try SecretStreamReceiver(key: key, header: out.header)
        #expect(throws: SecretStreamError.forged) { try b.open(f2) }  // out of order
        let c = try SecretStreamReceiver(key: key, header: out.header)
        _ = try c.open(f1)
        var bad = f2
        bad[0] ^= 1
        #expect(throws: SecretStreamError.forged) { try c.open(bad) }
        #expect(throws: SecretStreamError.tooShort) { try c.open([1, 2]) }
        #expect(throws: SecretStreamError.badHeader) { try SecretStreamReceiver(key: key, header: [1]) }
        _ = f3
    }
}
