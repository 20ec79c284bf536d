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
    public static let sealedKeyByteCount = CircleKey.byteCount + SealedBox.overhead

    func encode(into w: inout ByteWriter) {
        w.byte(kind.rawValue)
        switch self {
        case .found(let proof):
            w.append(proof)
        case .admit(let subject, let invitation, let name):
            w.append(subject.bytes)
            w.append(invitation.bytes)
            w.lengthPrefixed(Array(PlayerName.truncated(name).utf8))
        case .remove(let subject, let kept):
            w.append(subject.bytes)
            w.varint(kept.count)
            for game in kept.keys.sorted() {
                w.append(game.bytes)
                w.varint(kept[game] ?? 0)
            }
        case .rekey(let epoch, let check, let sealed):
            w.varint(epoch)
            w.append(check)
            w.varint(sealed.count)
            for member in sealed.keys.sorted() {
                w.append(member.bytes)
                w.append(sealed[member] ?? [])
            }
        case .invite(let key, let expires):
            w.append(key.bytes)
            w.varint(expires)
        case .revoke(let key):
            w.append(key.bytes)
        }
    }

    static func decode(from r: inout ByteReader) throws(SyncDecodingError) -> LegacyChange {
        let k = try r.byte("membership kind")
        guard let kind = Kind(rawValue: k) else { throw .unknownKind(field: "membership kind", value: k) }
        switch kind {
        case .found:
            return .found(proof: try r.take(CircleKey.proofByteCount, "founding proof"))
        case .admit:
            let subject = try peer(&r, "admitted device")
            let invitation = try peer(&r, "invitation key")
            let nameBytes = try r.lengthPrefixed("admitted name", max: PlayerName.byteLimit)
            guard let name = String(validating: nameBytes, as: UTF8.self) else { throw .invalidText(field: "admitted name") }
            return .admit(subject: subject, invitation: invitation, name: name)
        case .remove:
            let subject = try peer(&r, "removed device")
            let count = try r.int("kept game count", max: listLimit)
            var kept: [GameID: UInt64] = [:]
            var last: GameID?
            for _ in 0..<count {
                guard let game = GameID(bytes: try r.take(GameID.byteCount, "kept game")) else { throw .truncated(field: "kept game") }
                if let last, !(last < game) { throw .valueOutOfRange(field: "kept game order", value: 0) }
                last = game
                kept[game] = try r.varint("kept ops")
            }
            return .remove(subject: subject, kept: kept)
        case .rekey:
            let epoch = try r.varint("key epoch")
            guard epoch >= 1 else { throw .valueOutOfRange(field: "key epoch", value: epoch) }
            let check = try r.take(16, "key check")
            let count = try r.int("sealed key count", max: listLimit)
            var sealed: [PeerID: [UInt8]] = [:]
            var last: PeerID?
            for _ in 0..<count {
                let member = try peer(&r, "key recipient")
                if let last, !(last < member) { throw .valueOutOfRange(field: "key recipient order", value: 0) }
                last = member
                sealed[member] = try r.take(sealedKeyByteCount, "sealed key")
            }
            return .rekey(epoch: epoch, check: check, sealed: sealed)
        case .invite:
            let key = try peer(&r, "invitation key")
            return .invite(key: key, expiresMillis: try r.varint("invitation expiry"))
        case .revoke:
            return .revoke(key: try peer(&r, "revoked invitation"))
        }
    }

    private static func peer(_ r: inout ByteReader, _ field: String) throws(SyncDecodingError) -> PeerID {
        do {
            return try PeerID(bytes: try r.take(PeerID.byteCount, field))
        } catch {
            throw .truncated(field: field)
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
    public init(signing identity: SigningIdentity, circle: CircleID, madeMillis: UInt64, parents: Set<RecordHash>,
                change: LegacyChange) {
        let sortedParents = parents.sorted().prefix(Self.parentLimit)
        let bytes = Self.encode(circle: circle, author: identity.peerID, madeMillis: madeMillis, parents: Array(sortedParents), change: change)
        self.init(circle: circle, author: identity.peerID, madeMillis: madeMillis, parents: Array(sortedParents), change: change,
                  signature: identity.sign(Self.signatureDomain + bytes), signedBytes: bytes)
    }

    private init(circle: CircleID, author: PeerID, madeMillis: UInt64, parents: [RecordHash], change: LegacyChange,
                 signature: Signature, signedBytes: [UInt8]) {
        self.circle = circle
        self.author = author
        self.madeMillis = madeMillis
        self.parents = parents
        self.change = change
        self.signature = signature
        self.signedBytes = signedBytes
        hash = RecordHash(unchecked: Blake2b.hash(Self.hashDomain, signedBytes, length: RecordHash.byteCount))
    }

    private static func encode(circle: CircleID, author: PeerID, madeMillis: UInt64, parents: [RecordHash],
                               change: LegacyChange) -> [UInt8] {
        var w = ByteWriter(capacity: 128)
        w.byte(version)
        w.append(circle.bytes)
        w.append(author.bytes)
        w.varint(madeMillis)
        w.varint(parents.count)
        for p in parents { w.append(p.bytes) }
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
    public init(decoding bytes: [UInt8]) throws(SyncDecodingError) {
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
        let count = try r.int("parent count", max: Self.parentLimit)
        var parents: [RecordHash] = []
        for _ in 0..<count {
            let p = RecordHash(unchecked: try r.take(RecordHash.byteCount, "parent hash"))
            if let last = parents.last, !(last < p) { throw .valueOutOfRange(field: "parent order", value: 0) }
            parents.append(p)
        }
        let change = try LegacyChange.decode(from: &r)
        try r.expectEnd()
        guard let signature = Signature(bytes: bytes.suffix(Signature.byteCount)) else { throw .truncated(field: "signature") }
        self.init(circle: circle, author: author, madeMillis: made, parents: parents, change: change, signature: signature,
                  signedBytes: body)
    }

    public static func == (a: LegacyRecord, b: LegacyRecord) -> Bool { a.hash == b.hash }
    public func hash(into hasher: inout Hasher) { hasher.combine(hash) }
}
