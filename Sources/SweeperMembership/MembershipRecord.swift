import SweeperConventions
import SweeperCrypto
import SweeperSync

/// A circle's lasting identity: BLAKE2b-128 of its first key. Keys change
/// when a device is removed; the circle id does not. Every membership
/// record names it, so a record of one circle means nothing in another.
public struct CircleID: Hashable, Sendable, CustomStringConvertible {
    /// The length in bytes.
    public static let byteCount = 16
    /// The id bytes.
    public let bytes: [UInt8]

    /// The id of the circle whose first key is `firstKey`.
    public init(firstKey: CircleKey) {
        bytes = Blake2b.keyedHash(key: firstKey.secret, Array("sweeper/circle-id/v1".utf8), length: Self.byteCount)
    }

    /// Wraps 16 bytes; `nil` for any other length.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = Array(bytes)
    }

    public var description: String { Hex.encode(bytes) }
}

extension CircleKey {
    /// A public commitment to this key (BLAKE2b-128 keyed by it): a rekey
    /// record carries it, so that a member handed the key over a link can
    /// check it is the one the record made.
    public var check: [UInt8] { Blake2b.keyedHash(key: secret, Array("sweeper/circle-key-check/v1".utf8), length: 16) }
}

/// The hash of a membership record: BLAKE2b-256 over a domain string and
/// the record's unsigned bytes.
public struct RecordHash: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The length in bytes.
    public static let byteCount = 32
    /// The hash bytes.
    public let bytes: [UInt8]

    init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    public var description: String { Hex.encode(bytes) }

    public static func < (a: RecordHash, b: RecordHash) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }

    public func hash(into hasher: inout Hasher) { hasher.combine(wordsOf: bytes) }
}

/// A device's role in a circle. A lower raw value is more senior.
public enum Role: UInt8, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    /// The device that made the circle: one per circle, never removed.
    case founder = 0
    /// A parent: may remove less senior devices and name admins.
    case admin = 1
    /// Plays and invites.
    case member = 2

    public static func < (a: Role, b: Role) -> Bool { a.rawValue < b.rawValue }

    public var description: String {
        switch self {
        case .founder: "founder"
        case .admin: "admin"
        case .member: "member"
        }
    }
}

/// What a membership record says.
///
/// Three kinds concern another device (the *subject*) and name how far the
/// subject's own records go when the change takes effect (`through`: its
/// records up to that position in its chain are before the change, later
/// ones after it). The author writes the subject's newest record it holds.
public enum MembershipChange: Hashable, Sendable {
    /// The circle's first record: its author, who proves the first key, is
    /// the founder. A circle has one; no other device ever founds.
    case found(proof: [UInt8])
    /// The author admits `subject`, who proved it held the author's
    /// invitation whose key is `invitation`, as a member named `name`.
    /// `through` is 0 for a new device; a removed device that an admin
    /// admits again comes back for its records after `through`.
    case admit(subject: PeerID, invitation: PeerID, name: String, through: UInt64)
    /// The author removes `subject`: its records after `through` are void.
    /// `kept` lists, per game, how many of the subject's ops the author
    /// held: those stay, later ones are refused.
    case remove(subject: PeerID, through: UInt64, kept: [GameID: UInt64])
    /// A new circle key for `epoch` (1, 2, …), sealed to each member the
    /// author counted (``SealedBox``), with the key's ``CircleKey/check``.
    case rekey(epoch: UInt64, check: [UInt8], sealed: [PeerID: [UInt8]])
    /// An invitation: whoever proves the secret behind `key` before
    /// `expiresMillis` may be admitted, once, by the author.
    case invite(key: PeerID, expiresMillis: UInt64)
    /// The invitation whose key is `key` may no longer be used.
    case revoke(key: PeerID)
    /// The author names `subject` an admin, for its records after `through`.
    case promote(subject: PeerID, through: UInt64)
    /// The author turns `subject`'s invitations off (`allowed` false) or
    /// back on, for its records after `through`. While they are off, the
    /// subject's invitations, old and new, admit nobody. It concerns
    /// members only: admins and the founder always invite. Kind 7, peer
    /// protocol 10: older peers are not sent it.
    case invitations(subject: PeerID, through: UInt64, allowed: Bool)

    /// The kind byte in the encoding.
    public enum Kind: UInt8, Sendable, CaseIterable {
        case found = 0, admit, remove, rekey, invite, revoke, promote, invitations
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
        case .promote: .promote
        case .invitations: .invitations
        }
    }

    /// The device the change is about (admit, remove, promote, invitations).
    public var subject: PeerID? {
        switch self {
        case .admit(let subject, _, _, _), .remove(let subject, _, _), .promote(let subject, _), .invitations(let subject, _, _): subject
        default: nil
        }
    }

    /// The most games a removal lists.
    public static let keptLimit = 65_536
    /// The most members a rekey seals the new key to: far more devices
    /// than a family has (a rekey of that many is 112 KiB).
    public static let recipientLimit = 1_024
    /// The length of a sealed circle key.
    public static let sealedKeyByteCount = RecordFields.sealedKeyByteCount

    func encode(into w: inout ByteWriter) {
        w.byte(kind.rawValue)
        switch self {
        case .found(let proof):
            w.append(proof)
        case .admit(let subject, let invitation, let name, let through):
            w.append(subject.bytes)
            w.append(invitation.bytes)
            RecordFields.write(name: name, into: &w)
            w.varint(through)
        case .remove(let subject, let through, let kept):
            w.append(subject.bytes)
            w.varint(through)
            RecordFields.write(kept: kept, into: &w)
        case .rekey(let epoch, let check, let sealed):
            RecordFields.write(rekey: epoch, check: check, sealed: sealed, into: &w)
        case .invite(let key, let expires):
            w.append(key.bytes)
            w.varint(expires)
        case .revoke(let key):
            w.append(key.bytes)
        case .promote(let subject, let through):
            w.append(subject.bytes)
            w.varint(through)
        case .invitations(let subject, let through, let allowed):
            w.append(subject.bytes)
            w.varint(through)
            w.byte(allowed ? 1 : 0)
        }
    }

    static func decode(from r: inout ByteReader) throws(ByteDecodingError) -> MembershipChange {
        let k = try r.byte("membership kind")
        guard let kind = Kind(rawValue: k) else { throw .unknownKind(field: "membership kind", value: k) }
        switch kind {
        case .found:
            return .found(proof: try r.take(CircleKey.proofByteCount, "founding proof"))
        case .admit:
            let subject = try RecordFields.peer(&r, "admitted device")
            let invitation = try RecordFields.peer(&r, "invitation key")
            let name = try RecordFields.name(&r)
            return .admit(subject: subject, invitation: invitation, name: name, through: try r.varint("admitted through"))
        case .remove:
            let subject = try RecordFields.peer(&r, "removed device")
            let through = try r.varint("removed through")
            let kept = try RecordFields.kept(&r, limit: keptLimit)
            return .remove(subject: subject, through: through, kept: kept)
        case .rekey:
            let (epoch, check, sealed) = try RecordFields.rekey(&r, limit: recipientLimit)
            return .rekey(epoch: epoch, check: check, sealed: sealed)
        case .invite:
            let key = try RecordFields.peer(&r, "invitation key")
            return .invite(key: key, expiresMillis: try r.varint("invitation expiry"))
        case .revoke:
            return .revoke(key: try RecordFields.peer(&r, "revoked invitation"))
        case .promote:
            let subject = try RecordFields.peer(&r, "named admin")
            return .promote(subject: subject, through: try r.varint("admin through"))
        case .invitations:
            let subject = try RecordFields.peer(&r, "invitations of")
            let through = try r.varint("invitations through")
            let allowed = try r.byte("invitations allowed")
            guard allowed <= 1 else { throw .valueOutOfRange(field: "invitations allowed", value: UInt64(allowed)) }
            return .invitations(subject: subject, through: through, allowed: allowed == 1)
        }
    }
}

/// One signed change to a circle's membership, at its place in its
/// author's chain.
///
/// Encoding (version 2), hashed and signed:
///
///     version (1, = 2) ‖ circle id (16) ‖ author key (32) ‖ made at, ms
///     since 1970 (LEB128) ‖ seq (LEB128, ≥ 1) ‖ previous (32: the hash of
///     the author's record seq − 1; absent when seq = 1) ‖ parent count
///     (LEB128, ≤ 64) ‖ parent hashes (32 each, ascending) ‖ kind (1) ‖ body
///
/// Every author's records form a chain, as its ops do: a record names the
/// author's previous one, so no author can place a record before the ones
/// it already wrote. The parents are the other records the author knew
/// that no record it knew named (its heads): they order records causally
/// (a rekey after a removal) and are never used to rank one record over
/// another. The signature is Ed25519 over `"sweeper/member/v2\0"` ‖ those
/// bytes; the hash is BLAKE2b-256 over `"sweeper/member-hash/v2\0"` ‖ those
/// bytes. On the wire and on disk a record is its bytes ‖ signature (64).
///
/// A class, though immutable as a value: every derivation of the circle
/// reads each record again, and passing one on is then one reference
/// counted, not each of its arrays.
public final class MembershipRecord: Hashable, Sendable {
    /// The version byte of the encoding.
    public static let version: UInt8 = 2
    /// The most parents a record names.
    public static let parentLimit = 64
    /// The most bytes a record may have: a rekey to ``MembershipChange/recipientLimit`` members fits.
    public static let byteLimit = 128 * 1024
    static let signatureDomain = Array("sweeper/member/v2\0".utf8)
    static let hashDomain = Array("sweeper/member-hash/v2\0".utf8)

    /// The circle.
    public let circle: CircleID
    /// Who made the change.
    public let author: PeerID
    /// When, by the author's clock (ms since 1970; informative only).
    public let madeMillis: UInt64
    /// The record's place in its author's chain: 1, 2, …
    public let seq: UInt64
    /// The hash of the author's record `seq − 1` (`nil` when seq is 1).
    public let previous: RecordHash?
    /// The author's other heads when it made the change.
    public let parents: [RecordHash]
    /// The change.
    public let change: MembershipChange
    /// The author's signature over ``signedBytes``.
    public let signature: Signature
    /// The bytes hashed and signed.
    public let signedBytes: [UInt8]
    /// The record's hash.
    public let hash: RecordHash

    /// Makes and signs a record at `seq` in the author's chain.
    public convenience init(
        signing identity: SigningIdentity, circle: CircleID, madeMillis: UInt64, seq: UInt64, previous: RecordHash?,
        parents: Set<RecordHash>, change: MembershipChange
    ) {
        var others = parents
        if let previous { others.remove(previous) }
        let sortedParents = Array(others.sorted().prefix(Self.parentLimit))
        var w = ByteWriter(capacity: 160)
        w.byte(Self.version)
        w.append(circle.bytes)
        w.append(identity.peerID.bytes)
        w.varint(madeMillis)
        w.varint(seq)
        if seq > 1, let previous { w.append(previous.bytes) }
        RecordFields.write(parents: sortedParents, into: &w)
        change.encode(into: &w)
        let bytes = w.bytes
        self.init(
            circle: circle, author: identity.peerID, madeMillis: madeMillis, seq: seq, previous: seq > 1 ? previous : nil,
            parents: sortedParents, change: change, signature: identity.sign(Self.signatureDomain + bytes), signedBytes: bytes)
    }

    private init(
        circle: CircleID, author: PeerID, madeMillis: UInt64, seq: UInt64, previous: RecordHash?, parents: [RecordHash],
        change: MembershipChange, signature: Signature, signedBytes: [UInt8]
    ) {
        self.circle = circle
        self.author = author
        self.madeMillis = madeMillis
        self.seq = seq
        self.previous = previous
        self.parents = parents
        self.change = change
        self.signature = signature
        self.signedBytes = signedBytes
        hash = RecordHash(unchecked: Blake2b.hash(Self.hashDomain, signedBytes, length: RecordHash.byteCount))
    }

    /// The record as sent and stored: signed bytes ‖ signature.
    public var encoded: [UInt8] { signedBytes + signature.bytes }

    /// Whether the signature is the author's.
    public var hasValidSignature: Bool { author.isValidSignature(signature, of: Self.signatureDomain + signedBytes) }

    /// Every record this one names: its previous, then its parents.
    public var named: [RecordHash] { (previous.map { [$0] } ?? []) + parents }

    /// Decodes ``encoded`` bytes, refusing other versions and unknown kinds,
    /// bad lengths, unordered lists and trailing bytes. Checks nothing else:
    /// that is ``CircleMembership/insert(_:)``'s job.
    public convenience init(decoding bytes: [UInt8]) throws(ByteDecodingError) {
        guard bytes.count > Signature.byteCount else { throw .truncated(field: "membership record") }
        guard bytes.count <= Self.byteLimit else { throw .valueOutOfRange(field: "membership record length", value: UInt64(bytes.count)) }
        let body = Array(bytes.dropLast(Signature.byteCount))
        var r = ByteReader(body)
        let version = try r.byte("version")
        guard version == Self.version else { throw .unknownVersion(version) }
        guard let circle = CircleID(bytes: try r.take(CircleID.byteCount, "circle id")) else { throw .truncated(field: "circle id") }
        let author = try RecordFields.peer(&r, "author key")
        let made = try r.varint("made at")
        let seq = try r.varint("seq")
        guard seq >= 1 else { throw .valueOutOfRange(field: "seq", value: seq) }
        let previous = seq > 1 ? RecordHash(unchecked: try r.take(RecordHash.byteCount, "previous hash")) : nil
        let parents = try RecordFields.parents(&r, limit: Self.parentLimit)
        let change = try MembershipChange.decode(from: &r)
        try r.expectEnd()
        guard let signature = Signature(bytes: bytes.suffix(Signature.byteCount)) else { throw .truncated(field: "signature") }
        self.init(
            circle: circle, author: author, madeMillis: made, seq: seq, previous: previous, parents: parents, change: change,
            signature: signature, signedBytes: body)
    }

    public static func == (a: MembershipRecord, b: MembershipRecord) -> Bool { a.hash == b.hash }
    public func hash(into hasher: inout Hasher) { hasher.combine(hash) }
}

/// A membership record of either version, as read from the wire or the store.
public enum AnyMembershipRecord: Sendable {
    /// A record of this release.
    case current(MembershipRecord)
    /// A record of version 1 (a circle made before roles).
    case legacy(LegacyRecord)

    /// Decodes a record of version 1 or 2.
    public init(decoding bytes: [UInt8]) throws(ByteDecodingError) {
        guard let version = bytes.first else { throw .truncated(field: "membership record") }
        if version == LegacyRecord.version {
            self = .legacy(try LegacyRecord(decoding: bytes))
        } else {
            self = .current(try MembershipRecord(decoding: bytes))
        }
    }
}
