import SweeperCrypto
import SweeperConventions

/// What two peers say to each other inside their encrypted link.
///
/// Encoding: type (1 byte) ‖ body.
/// - `hello` (0): protocol version (1) ‖ listening port (2, big-endian) ‖
///   name length (1) ‖ name (UTF-8, at most 64 bytes).
/// - `sync` (1): a ``SweeperSync`` sync message, as its own encoding.
/// - `ping` (2) / `pong` (3): 8-byte big-endian token.
/// - `links` (4, protocol version 2): count (2, big-endian) ‖ that many
///   32-byte peer ids.
/// - `presence` (5, protocol version 3): a ``PresenceNote``.
/// - `profile` (6, protocol version 3): a ``ProfileNote``.
/// - `play` (7, protocol version 4): a ``PlayNote``.
/// - `membership` (8, protocol version 6): count (2, big-endian) ‖ that
///   many records, each as length (4, big-endian) ‖ an encoded membership record.
/// - `admission` (9), `admitted` (10), `refused` (11): the only messages of
///   a link whose handshake proved an invitation (see ``AdmissionRequest``).
public enum PeerMessage: Sendable, Equatable {
    /// The first message each side sends after the handshake.
    case hello(PeerHello)
    /// A sync message, encoded by SweeperSync.
    case sync([UInt8])
    /// A keep-alive asking for a ``pong(_:)`` with the same token.
    case ping(UInt64)
    /// The answer to a ``ping(_:)``.
    case pong(UInt64)
    /// The peers the sender is linked to now, sent whenever that changes,
    /// to peers of protocol version 2 or later: an op is not relayed to a
    /// peer linked to its author, who pushes it there itself.
    case links([PeerID])
    /// Where a player is looking (their own, or relayed once from its
    /// author), sent to peers of protocol version 3 or later.
    case presence(PresenceNote)
    /// A player's name and colour (their own, or one the sender keeps),
    /// sent to peers of protocol version 3 or later.
    case profile(ProfileNote)
    /// A player's share of a game's played time (their own, or one the
    /// sender keeps), sent to peers of protocol version 4 or later.
    case play(PlayNote)
    /// Signed membership records of the circle (the sender's, or ones it
    /// keeps), each as its own encoding, parents before children: sent to
    /// peers of protocol version 6 or later.
    case membership([[UInt8]])
    /// A joining device asks to be admitted with an invitation.
    case admission(AdmissionRequest)
    /// The member admitted it: the circle's keys, the first one first (the
    /// records, with its admission, came just before in a ``membership(_:)``).
    case admitted([CircleKey])
    /// The member did not admit it, and why.
    case refused(AdmissionRefusal)

    /// The most records one ``membership(_:)`` message carries.
    public static let membershipLimit = 4096
    /// The most peer ids one ``links(_:)`` message may carry.
    public static let linksLimit = 1024

    /// The encoded message.
    public var encoded: [UInt8] {
        switch self {
        case .hello(let h):
            let name = Array(PlayerName.truncated(h.name).utf8)
            return [0, h.protocolVersion, UInt8(h.listenPort >> 8), UInt8(h.listenPort & 0xFF), UInt8(name.count)] + name
        case .sync(let bytes):
            return [1] + bytes
        case .ping(let token):
            return [2] + Self.bigEndian(token)
        case .pong(let token):
            return [3] + Self.bigEndian(token)
        case .links(let peers):
            let listed = peers.prefix(Self.linksLimit)
            return [4, UInt8(listed.count >> 8), UInt8(listed.count & 0xFF)] + listed.flatMap(\.bytes)
        case .presence(let note):
            return [5] + note.encoded
        case .profile(let note):
            return [6] + note.encoded
        case .play(let note):
            return [7] + note.encoded
        case .admission(let request):
            return [9] + request.invitation.bytes + request.signature.bytes
        case .admitted(let keys):
            let listed = keys.prefix(255)
            return [10, UInt8(listed.count)] + listed.flatMap(\.bytes)
        case .refused(let reason):
            return [11, reason.rawValue]
        case .membership(let records):
            let listed = records.prefix(Self.membershipLimit)
            var out: [UInt8] = [8, UInt8(listed.count >> 8), UInt8(listed.count & 0xFF)]
            for r in listed { out += Self.bigEndian32(r.count) + r }
            return out
        }
    }

    private static func bigEndian32(_ n: Int) -> [UInt8] {
        let v = UInt32(clamping: n)
        return [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    }

    private static func bigEndian(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * UInt64($0))) } }

    /// Decodes a message, refusing unknown types, bad lengths and bad names.
    public init(decoding bytes: [UInt8]) throws(PeerConnectionError) {
        guard let type = bytes.first else { throw .malformedMessage("empty message") }
        let body = bytes.dropFirst()
        switch type {
        case 0:
            guard body.count >= 4 else { throw .malformedMessage("short hello") }
            let b = Array(body)
            let nameLength = Int(b[3])
            guard nameLength <= PlayerName.byteLimit, b.count == 4 + nameLength else { throw .malformedMessage("hello of the wrong length") }
            guard let name = String(validating: b[4...], as: UTF8.self) else { throw .malformedMessage("hello name is not UTF-8") }
            self = .hello(PeerHello(protocolVersion: b[0], listenPort: UInt16(b[1]) << 8 | UInt16(b[2]), name: name))
        case 1:
            self = .sync(Array(body))
        case 2, 3:
            guard body.count == 8 else { throw .malformedMessage("keep-alive of \(body.count) bytes, not 8") }
            let token = body.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            self = type == 2 ? .ping(token) : .pong(token)
        case 4:
            guard body.count >= 2 else { throw .malformedMessage("short links message") }
            let b = Array(body)
            let count = Int(b[0]) << 8 | Int(b[1])
            guard count <= Self.linksLimit, b.count == 2 + count * PeerID.byteCount else {
                throw .malformedMessage("links message of the wrong length")
            }
            var peers: [PeerID] = []
            for i in 0..<count {
                let start = 2 + i * PeerID.byteCount
                guard let peer = try? PeerID(bytes: Array(b[start..<(start + PeerID.byteCount)])) else {
                    throw .malformedMessage("links message with a bad peer id")
                }
                peers.append(peer)
            }
            self = .links(peers)
        case 5:
            self = .presence(try PresenceNote(decoding: body))
        case 6:
            self = .profile(try ProfileNote(decoding: body))
        case 7:
            self = .play(try PlayNote(decoding: body))
        case 8:
            let b = Array(body)
            guard b.count >= 2 else { throw .malformedMessage("short membership message") }
            let count = Int(b[0]) << 8 | Int(b[1])
            guard count <= Self.membershipLimit else { throw .malformedMessage("membership message of \(count) records") }
            var records: [[UInt8]] = []
            var at = 2
            for _ in 0..<count {
                guard b.count - at >= 4 else { throw .malformedMessage("membership message of the wrong length") }
                let n = Int(b[at]) << 24 | Int(b[at + 1]) << 16 | Int(b[at + 2]) << 8 | Int(b[at + 3])
                at += 4
                guard n > 0, b.count - at >= n else { throw .malformedMessage("membership message of the wrong length") }
                records.append(Array(b[at..<(at + n)]))
                at += n
            }
            guard at == b.count else { throw .malformedMessage("membership message of the wrong length") }
            self = .membership(records)
        case 9:
            let b = Array(body)
            guard b.count == PeerID.byteCount + Signature.byteCount, let invitation = try? PeerID(bytes: b[0..<32]),
                let signature = Signature(bytes: b[32...])
            else { throw .malformedMessage("admission of the wrong length") }
            self = .admission(AdmissionRequest(invitation: invitation, signature: signature))
        case 10:
            let b = Array(body)
            guard let count = b.first, count >= 1, b.count == 1 + Int(count) * CircleKey.byteCount else {
                throw .malformedMessage("admitted message of the wrong length")
            }
            var keys: [CircleKey] = []
            for i in 0..<Int(count) {
                let start = 1 + i * CircleKey.byteCount
                guard let key = try? CircleKey(bytes: Array(b[start..<(start + CircleKey.byteCount)])) else {
                    throw .malformedMessage("admitted message with a bad key")
                }
                keys.append(key)
            }
            self = .admitted(keys)
        case 11:
            guard body.count == 1, let reason = body.first.flatMap(AdmissionRefusal.init(rawValue:)) else {
                throw .malformedMessage("refusal of the wrong length or reason")
            }
            self = .refused(reason)
        default:
            throw .malformedMessage("unknown message type \(type)")
        }
    }
}

/// A joining device's request to be admitted: the invitation's public key
/// and its signature over ``InvitationSecret/admissionMessage(joining:member:)``.
public struct AdmissionRequest: Sendable, Equatable {
    /// The invitation's public key.
    public var invitation: PeerID
    /// The invitation key's signature, binding the joining device and the member.
    public var signature: Signature

    /// Creates a request.
    public init(invitation: PeerID, signature: Signature) {
        self.invitation = invitation
        self.signature = signature
    }

    /// The request of the holder of `secret`, joining as `joining` through `member`.
    public init(secret: InvitationSecret, joining: PeerID, member: PeerID) {
        let key = secret.identity
        invitation = key.peerID
        signature = key.sign(InvitationSecret.admissionMessage(joining: joining, member: member))
    }

    /// Whether the signature is the invitation key's for `joining` and `member`.
    public func isValid(joining: PeerID, member: PeerID) -> Bool {
        invitation.isValidSignature(signature, of: InvitationSecret.admissionMessage(joining: joining, member: member))
    }
}

/// Why a member did not admit a joining device.
public enum AdmissionRefusal: UInt8, Error, Sendable, Equatable, CustomStringConvertible {
    /// The member does not know the invitation (or the request's signature is wrong).
    case unknown = 0
    /// The invitation admitted a device already.
    case used = 1
    /// The invitation expired.
    case expired = 2
    /// A member revoked the invitation.
    case revoked = 3
    /// The member could not admit anyone (it was removed, or its store failed).
    case unavailable = 4

    public var description: String {
        switch self {
        case .unknown: "the invitation is not known to the circle's member that answered"
        case .used: "the invite code was used already (each code admits one device); ask for a new one"
        case .expired: "the invite code has expired; ask for a new one"
        case .revoked: "the invite code was revoked; ask for a new one"
        case .unavailable: "the circle's member that answered cannot admit anyone now"
        }
    }
}

/// Who a peer says it is, beyond its proven key.
public struct PeerHello: Sendable, Equatable {
    /// The peer protocol version this build speaks: 2 adds the
    /// ``PeerMessage/links(_:)`` message, 3 ``PeerMessage/presence(_:)``
    /// and ``PeerMessage/profile(_:)``, 4 ``PeerMessage/play(_:)``, 5 the
    /// sync layer's interest message (which games the sender takes), 6
    /// ``PeerMessage/membership(_:)``, 7 games whose creator chose the
    /// players, and the players and archive ops, 8 flood ops and the sync
    /// layer's live pushes and chain-head signatures.
    public static let currentVersion: UInt8 = 8
    /// The first version that understands ``PeerMessage/links(_:)``.
    public static let linksVersion: UInt8 = 2
    /// The first version that understands ``PeerMessage/presence(_:)`` and
    /// ``PeerMessage/profile(_:)``.
    public static let presenceVersion: UInt8 = 3
    /// The first version that understands ``PeerMessage/play(_:)``.
    public static let playVersion: UInt8 = 4
    /// The first version whose sync layer understands an interest (sync
    /// message type 2): older peers are sent every game and what they send
    /// outside this side's interest is dropped on arrival.
    public static let interestVersion: UInt8 = 5
    /// The first version that understands ``PeerMessage/membership(_:)``.
    public static let membershipVersion: UInt8 = 6
    /// The first version that reads a genesis with players and the players
    /// and archive ops: older peers are not sent games that use them.
    public static let rolesVersion: UInt8 = 7
    /// The first version that reads flood ops, and takes a link peer's own
    /// ops as live pushes (sync message types 3 to 5): older peers are not
    /// sent games with flood ops, and are sent every op signed.
    public static let liveVersion: UInt8 = 8

    /// The sender's peer protocol version.
    public var protocolVersion: UInt8
    /// The port the sender listens on (0 when it does not), so the receiver
    /// can dial back after a restart.
    public var listenPort: UInt16
    /// The sender's player name.
    public var name: String

    /// Creates a hello.
    public init(protocolVersion: UInt8 = PeerHello.currentVersion, listenPort: UInt16, name: String) {
        self.protocolVersion = protocolVersion
        self.listenPort = listenPort
        self.name = name
    }
}
