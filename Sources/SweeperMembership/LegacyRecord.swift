import SweeperConventions
import SweeperCrypto
import SweeperSync

/// What a membership record of version 1 says (the records of the release
/// before roles; read to migrate a circle, never made).
public enum LegacyChange: Hashable, Sendable {
    /// The author was a member before membership was recorded (a circle
    /// made by an earlier release, or a new circle's first device). The
    /// proof is the first key's membership proof for the author; founding
    /// closes with the circle's first rekey.
    case found(proof: [UInt8])
    /// The author admits `subject`, who proved it held the invitation
    /// whose key is `invitation`.
    case admit(subject: PeerID, invitation: PeerID, name: String)
    /// The author removes `subject` from the circle. `kept` lists, per
    /// game, how many of the subject's ops the author held: those stay,
    /// later ones are refused.
    case remove(subject: PeerID, kept: [GameID: UInt64])
    /// A new circle key for `epoch` (1, 2, …), sealed to each member the
    /// author counted (``SealedBox``), with the key's ``CircleKey/check``.
    case rekey(epoch: UInt64, check: [UInt8], sealed: [PeerID: [UInt8]])
    /// An invitation: whoever proves the secret behind `key` before
    /// `expiresMillis` may be admitted, once.
    case invite(key: PeerID, expiresMillis: UInt64)
    /// The invitation whose key is `key` may no longer be used.
    case revoke(key: PeerID)

    /// The kind byte in the encoding.
    public enum Kind: UInt8, Sendable, CaseIterable {
        case found = 0, admit, remove, rekey, invite, revoke
    }

    /// This change's kind.
    public var kind: Kind {
        switch self {
        case .found: .found
        case .admit: .admit
        case .remove: .remove
        case .rekey: .rekey
        case .invite: .invite
        case .revoke: .revoke
        }
    }

    /// The most games a removal lists, and the most members a rekey seals to.
    public static let listLimit = 65_536
    /// The length of a sealed circle key.
    public static let sealedKeyByteCount = RecordFields.sealedKeyByteCount

    func encode(into w: inout ByteWriter) {
        w.byte(kind.rawValue)
        switch self {
        case .found(let proof):
            w.append(proof)
        case .admit(let subject, let invitation, let name):
            w.append(subject.bytes)
            w.append(invitation.bytes)
            RecordFields.write(name: name, into: &w)
        case .remove(let subject, let kept):
            w.append(subject.bytes)
            RecordFields.write(kept: kept, into: &w)
        case .rekey(let epoch, let check, let sealed):
            RecordFields.write(rekey: epoch, check: check, sealed: sealed, into: &w)
        case .invite(let key, let expires):
            w.append(key.bytes)
            w.varint(expires)
        case .revoke(let key):
            w.append(key.bytes)
        }
    }

    static func decode(from r: inout ByteReader) throws(ByteDecodingError) -> LegacyChange {
        let k = try r.byte("membership kind")
        guard let kind = Kind(rawValue: k) else { throw .unknownKind(field: "membership kind", value: k) }
        switch kind {
        case .found:
            return .found(proof: try r.take(CircleKey.proofByteCount, "founding proof"))
        case .admit:
            let subject = try RecordFields.peer(&r, "admitted device")
            let invitation = try RecordFields.peer(&r, "invitation key")
            let name = try RecordFields.name(&r)
            return .admit(subject: subject, invitation: invitation, name: name)
        case .remove:
            let subject = try RecordFields.peer(&r, "removed device")
            let kept = try RecordFields.kept(&r, limit: listLimit)
            return .remove(subject: subject, kept: kept)
        case .rekey:
            let (epoch, check, sealed) = try RecordFields.rekey(&r, limit: listLimit)
            return .rekey(epoch: epoch, check: check, sealed: sealed)
        case .invite:
            let key = try RecordFields.peer(&r, "invitation key")
            return .invite(key: key, expiresMillis: try r.varint("invitation expiry"))
        case .revoke:
            return .revoke(key: try RecordFields.peer(&r, "revoked invitation"))
        }
    }
}

/// One signed change to a circle's membership.
///
/// Encoding (version 1), hashed and signed:
///
///     version (1, = 1) ‖ circle id (16) ‖ author key (32) ‖ made at, ms
///     since 1970 (LEB128) ‖ parent count (LEB128, ≤ 64) ‖ parent hashes
///     (32 each, ascending) ‖ kind (1) ‖ body
///
/// The parents are the records the author knew that no other record it
/// knew named (its heads): they order records causally. The signature is
/// Ed25519 over `"sweeper/member/v1\0"` ‖ those bytes; the hash is
/// BLAKE2b-256 over `"sweeper/member-hash/v1\0"` ‖ those bytes. On the wire
/// and on disk a record is its bytes ‖ signature (64).
public struct LegacyRecord: Hashable, Sendable {
    /// The version byte of the encoding.
    public static let version: UInt8 = 1
    /// The most parents a record names.
    public static let parentLimit = 64
    static let signatureDomain = Array("sweeper/member/v1\0".utf8)
    static let hashDomain = Array("sweeper/member-hash/v1\0".utf8)

    /// The circle.
    public let circle: CircleID
    /// Who made the change.
    public let author: PeerID
    /// When, by the author's clock (ms since 1970; informative only).
    public let madeMillis: UInt64
    /// The author's heads when it made the change.
    public let parents: [RecordHash]
    /// The change.
    public let change: LegacyChange
    /// The author's signature over ``signedBytes``.
    public let signature: Signature
    /// The bytes hashed and signed.
    public let signedBytes: [UInt8]
    /// The record's hash.
    public let hash: RecordHash

    /// Makes and signs a record.
    public init(
        signing identity: SigningIdentity, circle: CircleID, madeMillis: UInt64, parents: Set<RecordHash>,
        change: LegacyChange
    ) {
        let sortedParents = parents.sorted().prefix(Self.parentLimit)
        let bytes = Self.encode(circle: circle, author: identity.peerID, madeMillis: madeMillis, parents: Array(sortedParents), change: change)
        self.init(
            circle: circle, author: identity.peerID, madeMillis: madeMillis, parents: Array(sortedParents), change: change,
            signature: identity.sign(Self.signatureDomain + bytes), signedBytes: bytes)
    }

    private init(
        circle: CircleID, author: PeerID, madeMillis: UInt64, parents: [RecordHash], change: LegacyChange,
        signature: Signature, signedBytes: [UInt8]
    ) {
        self.circle = circle
        self.author = author
        self.madeMillis = madeMillis
        self.parents = parents
        self.change = change
        self.signature = signature
        self.signedBytes = signedBytes
        hash = RecordHash(unchecked: Blake2b.hash(Self.hashDomain, signedBytes, length: RecordHash.byteCount))
    }

    private static func encode(
        circle: CircleID, author: PeerID, madeMillis: UInt64, parents: [RecordHash],
        change: LegacyChange
    ) -> [UInt8] {
        var w = ByteWriter(capacity: 128)
        w.byte(version)
        w.append(circle.bytes)
        w.append(author.bytes)
        w.varint(madeMillis)
        RecordFields.write(parents: parents, into: &w)
        change.encode(into: &w)
        return w.bytes
    }

    /// The record as sent and stored: signed bytes ‖ signature.
    public var encoded: [UInt8] { signedBytes + signature.bytes }

    /// Whether the signature is the author's.
    public var hasValidSignature: Bool { author.isValidSignature(signature, of: Self.signatureDomain + signedBytes) }

    /// Decodes ``encoded`` bytes, refusing unknown versions and kinds, bad
    /// lengths, unordered lists and trailing bytes. Checks nothing else:
    /// that is ``CircleMembership/insert(_:)``'s job.
    public init(decoding bytes: [UInt8]) throws(ByteDecodingError) {
        guard bytes.count > Signature.byteCount else { throw .truncated(field: "membership record") }
        let body = Array(bytes.dropLast(Signature.byteCount))
        var r = ByteReader(body)
        let version = try r.byte("version")
        guard version == Self.version else { throw .unknownVersion(version) }
        guard let circle = CircleID(bytes: try r.take(CircleID.byteCount, "circle id")) else { throw .truncated(field: "circle id") }
        let author: PeerID
        do {
            author = try PeerID(bytes: try r.take(PeerID.byteCount, "author key"))
        } catch {
            throw .truncated(field: "author key")
        }
        let made = try r.varint("made at")
        let parents = try RecordFields.parents(&r, limit: Self.parentLimit)
        let change = try LegacyChange.decode(from: &r)
        try r.expectEnd()
        guard let signature = Signature(bytes: bytes.suffix(Signature.byteCount)) else { throw .truncated(field: "signature") }
        self.init(
            circle: circle, author: author, madeMillis: made, parents: parents, change: change, signature: signature,
            signedBytes: body)
    }

    public static func == (a: LegacyRecord, b: LegacyRecord) -> Bool { a.hash == b.hash }
    public func hash(into hasher: inout Hasher) { hasher.combine(hash) }
}
