import CSodium

/// Why a handshake failed. Every failure closes the connection; none says
/// more to the other side than that.
public enum HandshakeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A message had the wrong length.
    case wrongLength(message: Int, expected: Int, actual: Int)
    /// The other side does not know this circle's key.
    case notInCircle
    /// The other side's identity proof did not decrypt or verify.
    case badIdentityProof
    /// The other side is not the peer that was expected.
    case unexpectedPeer(PeerID)
    /// The other side is this daemon itself.
    case connectedToSelf
    /// A message arrived out of turn.
    case outOfTurn

    public var description: String {
        switch self {
        case .wrongLength(let m, let e, let a): "handshake message \(m) has \(a) bytes, not \(e)"
        case .notInCircle: "the peer does not hold this circle's key"
        case .badIdentityProof: "the peer's identity proof is invalid"
        case .unexpectedPeer(let p): "the peer is \(p.shortDescription)…, not the one dialled"
        case .connectedToSelf: "connected to this daemon itself"
        case .outOfTurn: "handshake message out of turn"
        }
    }
}

/// What a completed handshake yields: who the other side is and the keys
/// of the two encrypted directions.
public struct HandshakeResult: Sendable {
    /// The other side's proven identity.
    public let peer: PeerID
    /// The key of frames this side sends.
    public let sendKey: SecretBytes
    /// The key of frames this side receives.
    public let receiveKey: SecretBytes
    /// The circle key the handshake proved (an accepting side that also
    /// takes earlier keys or invitations' keys learns here which it was).
    public var circle: CircleKey? = nil
}

/// A mutual handshake in the manner of Secure Scuttlebutt's secret
/// handshake, for two members of one circle.
///
/// 1. Client → server: `A ‖ mac(A)`: a fresh X25519 key and its BLAKE2b MAC
///    under the circle key, so only circle members get any further.
/// 2. Server → client: `B ‖ mac(B)`, likewise.
/// 3. Client → server: secretbox under a key from the circle key and the
///    ephemeral shared secret `ab`, holding the client's Ed25519 key and its
///    signature over the transcript (`A`, `B`, `hash(ab)`).
/// 4. Server → client: likewise for the server, its signature also covering
///    the client's key and signature.
///
/// Both sides then derive one key per direction from the circle key, `ab`
/// and both identities. Ephemeral keys give forward secrecy; identities
/// travel encrypted; a signature bound to the ephemeral keys cannot be
/// replayed into another session; an outsider without the circle key is
/// refused at the first message.
public struct SecretHandshake: ~Copyable {
    /// Whether this side dialled (the client) or accepted.
    public enum Role: Sendable { case client, server }

    /// The length of messages 1 and 2.
    public static let helloLength = 64
    /// The length of message 3.
    public static let clientAuthLength = 32 + 64 + Int(crypto_secretbox_MACBYTES)
    /// The length of message 4.
    public static let serverAuthLength = 32 + 64 + Int(crypto_secretbox_MACBYTES)

    private let role: Role
    /// The circle key the handshake proves; an accepting side that also
    /// accepts earlier keys switches to the one the client's hello proves.
    private var circle: CircleKey
    private let alsoAccepted: [CircleKey]
    private let identity: SigningIdentity
    private let expectedPeer: PeerID?
    private let ephemeralSecret: SecretBytes
    private let ephemeralPublic: [UInt8]
    private var otherEphemeral: [UInt8] = []
    private var shared: SecretBytes?
    private var clientKey: PeerID?
    private var clientSignature: [UInt8] = []
    private var step = 0

    /// Starts a handshake.
    /// - Parameter expectedPeer: when dialling a peer whose id is known (from
    ///   mDNS), the handshake fails unless the server proves that identity.
    /// - Parameter alsoAccepting: keys an accepting side also takes in the
    ///   client's hello (a circle's earlier keys); the rest of the
    ///   handshake and the link's keys then use the key it proved.
    public init(role: Role, circle: CircleKey, identity: SigningIdentity, expectedPeer: PeerID? = nil, alsoAccepting: [CircleKey] = []) {
        self.init(
            role: role, circle: circle, identity: identity, expectedPeer: expectedPeer, ephemeralSecret: SecretBytes(randomCount: 32),
            alsoAccepting: alsoAccepting)
    }

    /// The circle key the handshake proves (after message 1, on the accepting side, the one the client proved).
    public var provenKey: CircleKey { circle }

    /// Starts a handshake with a given ephemeral X25519 secret key (32
    /// bytes), so that its messages are reproducible: the test vectors of
    /// the peer protocol's specification are made this way. A real
    /// handshake must use a fresh random key every time.
    init(
        role: Role, circle: CircleKey, identity: SigningIdentity, expectedPeer: PeerID? = nil, ephemeralSecret: SecretBytes,
        alsoAccepting: [CircleKey] = []
    ) {
        Sodium.ensureReady()
        self.role = role
        self.circle = circle
        self.alsoAccepted = role == .server ? alsoAccepting : []
        self.identity = identity
        self.expectedPeer = expectedPeer
        var pub = [UInt8](repeating: 0, count: 32)
        ephemeralSecret.withUnsafeBytes { sk in
            // Both buffers are 32 bytes, so their base addresses exist.
            guard sk.count == 32, let base = sk.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            pub.withUnsafeMutableBufferPointer { p in
                if let pk = p.baseAddress { _ = crypto_scalarmult_base(pk, base) }
            }
        }
        self.ephemeralSecret = ephemeralSecret
        ephemeralPublic = pub
    }

    private func mac(_ key: [UInt8]) -> [UInt8] { Self.mac(key, under: circle) }

    private static func mac(_ key: [UInt8], under circle: CircleKey) -> [UInt8] {
        Blake2b.keyedHash(key: circle.secret, Array("sweeper/shs/v1/hello".utf8), key, length: 32)
    }

    /// Message 1 (client) or nothing (server speaks second).
    public mutating func start() -> [UInt8]? {
        guard role == .client, step == 0 else { return nil }
        step = 1
        return ephemeralPublic + mac(ephemeralPublic)
    }

    /// What handling one message produced.
    public enum Next: Sendable {
        /// Send this message and wait for the next.
        case send([UInt8])
        /// Send this last message (possibly empty), then the handshake is done.
        case finish(send: [UInt8]?, HandshakeResult)
    }

    /// Handles the next message from the other side.
    public mutating func receive(_ message: [UInt8]) throws(HandshakeError) -> Next {
        switch (role, step) {
        case (.server, 0):
            try acceptHello(message, number: 1)
            step = 2
            return .send(ephemeralPublic + mac(ephemeralPublic))
        case (.client, 1):
            try acceptHello(message, number: 2)
            step = 3
            let (a, b) = (ephemeralPublic, otherEphemeral)
            let signature = identity.sign(transcript("client", a, b)).bytes
            clientSignature = signature
            return .send(try seal(identity.peerID.bytes + signature, key: boxKey("client-auth", a, b, extra: [])))
        case (.server, 2):
            guard message.count == Self.clientAuthLength else {
                throw .wrongLength(message: 3, expected: Self.clientAuthLength, actual: message.count)
            }
            let (a, b) = (otherEphemeral, ephemeralPublic)
            let plain = try open(message, key: boxKey("client-auth", a, b, extra: []))
            guard let client = try? PeerID(bytes: plain[0..<32]), let signature = Signature(bytes: plain[32..<96]),
                client.isValidSignature(signature, of: transcript("client", a, b))
            else { throw .badIdentityProof }
            guard client != identity.peerID else { throw .connectedToSelf }
            let mine = identity.sign(transcript("server", a, b) + client.bytes + signature.bytes).bytes
            let reply = try seal(identity.peerID.bytes + mine, key: boxKey("server-auth", a, b, extra: client.bytes))
            step = 4
            return .finish(send: reply, keys(a, b, client: client, server: identity.peerID, peer: client))
        case (.client, 3):
            guard message.count == Self.serverAuthLength else {
                throw .wrongLength(message: 4, expected: Self.serverAuthLength, actual: message.count)
            }
            let (a, b) = (ephemeralPublic, otherEphemeral)
            let me = identity.peerID
            let plain = try open(message, key: boxKey("server-auth", a, b, extra: me.bytes))
            guard let server = try? PeerID(bytes: plain[0..<32]), let signature = Signature(bytes: plain[32..<96]),
                server.isValidSignature(signature, of: transcript("server", a, b) + me.bytes + clientSignature)
            else { throw .badIdentityProof }
            guard server != me else { throw .connectedToSelf }
            if let expectedPeer, expectedPeer != server { throw .unexpectedPeer(server) }
            step = 4
            return .finish(send: nil, keys(a, b, client: me, server: server, peer: server))
        default:
            throw .outOfTurn
        }
    }

    private mutating func acceptHello(_ message: [UInt8], number: Int) throws(HandshakeError) {
        guard message.count == Self.helloLength else {
            throw .wrongLength(message: number, expected: Self.helloLength, actual: message.count)
        }
        let key = Array(message[0..<32])
        if !constantTimeEqual(message[32..<64], mac(key)) {
            // An accepting side tries the circle's earlier keys: a member that missed a new key.
            guard let earlier = alsoAccepted.first(where: { constantTimeEqual(message[32..<64], Self.mac(key, under: $0)) }) else {
                throw .notInCircle
            }
            circle = earlier
        }
        var out = [UInt8](repeating: 0, count: 32)
        let ok = ephemeralSecret.withUnsafeBytes { sk in
            out.withUnsafeMutableBufferPointer { o in
                key.withUnsafeBufferPointer { pk in
                    guard let q = o.baseAddress, let n = sk.baseAddress?.assumingMemoryBound(to: UInt8.self), let p = pk.baseAddress
                    else { return false }
                    return crypto_scalarmult(q, n, p) == 0
                }
            }
        }
        // A low-order point gives an all-zero secret: refuse it.
        guard ok else { throw .notInCircle }
        shared = SecretBytes(copying: out)
        sweeper_memzero(&out, out.count)
        otherEphemeral = key
    }

    private func sharedHash() -> [UInt8] {
        guard let shared else { return [] }
        return Blake2b.hash(parts: [Array("sweeper/shs/v1/shared".utf8), shared.bytes], key: nil)
    }

    private func transcript(_ who: String, _ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        Array("sweeper/shs/v1/\(who)".utf8) + a + b + sharedHash()
    }

    private func boxKey(_ label: String, _ a: [UInt8], _ b: [UInt8], extra: [UInt8]) -> SecretBytes {
        let sharedBytes = shared?.bytes ?? []
        return SecretBytes(copying: Blake2b.hash(parts: [Array("sweeper/shs/v1/\(label)".utf8), sharedBytes, a, b, extra], key: circle.secret))
    }

    private func keys(_ a: [UInt8], _ b: [UInt8], client: PeerID, server: PeerID, peer: PeerID) -> HandshakeResult {
        let sharedBytes = shared?.bytes ?? []
        func derive(_ label: String) -> SecretBytes {
            SecretBytes(
                copying: Blake2b.hash(
                    parts: [Array("sweeper/shs/v1/\(label)".utf8), sharedBytes, a, b, client.bytes, server.bytes], key: circle.secret))
        }
        let c2s = derive("client-to-server"), s2c = derive("server-to-client")
        return role == .client
            ? HandshakeResult(peer: peer, sendKey: c2s, receiveKey: s2c, circle: circle)
            : HandshakeResult(peer: peer, sendKey: s2c, receiveKey: c2s, circle: circle)
    }

    private func seal(_ plain: [UInt8], key: SecretBytes) throws(HandshakeError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: plain.count + Int(crypto_secretbox_MACBYTES))
        let nonce = [UInt8](repeating: 0, count: Int(crypto_secretbox_NONCEBYTES))  // every key is used once
        let ok = key.withUnsafeBytes { k in
            guard let kp = k.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
            return crypto_secretbox_easy(&out, plain, UInt64(plain.count), nonce, kp) == 0
        }
        guard ok else { throw .badIdentityProof }
        return out
    }

    private func open(_ boxed: [UInt8], key: SecretBytes) throws(HandshakeError) -> [UInt8] {
        guard boxed.count >= Int(crypto_secretbox_MACBYTES) else { throw .badIdentityProof }
        var out = [UInt8](repeating: 0, count: boxed.count - Int(crypto_secretbox_MACBYTES))
        let nonce = [UInt8](repeating: 0, count: Int(crypto_secretbox_NONCEBYTES))
        let ok = key.withUnsafeBytes { k in
            guard let kp = k.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
            return crypto_secretbox_open_easy(&out, boxed, UInt64(boxed.count), nonce, kp) == 0
        }
        guard ok else { throw .badIdentityProof }
        return out
    }
}
