import SweeperConventions
import SweeperCrypto

/// A message of the application above the transport (SweeperMessages
/// defines them): a type byte the transport does not use itself, and a
/// body the transport carries unread.
public struct ApplicationMessage: Sendable, Equatable {
    /// The message's type: any byte but the transport's own
    /// (``LinkMessage/transportTypes``).
    public var type: UInt8
    /// The message's body.
    public var body: [UInt8]

    /// Creates a message.
    public init(type: UInt8, body: [UInt8]) {
        self.type = type
        self.body = body
    }
}

/// What two peers say to each other inside their encrypted link: the
/// transport's own messages, and the application's, which it carries by
/// type and body without reading them.
///
/// Encoding: type (1 byte) ‖ body.
/// - `hello` (0): protocol version (1) ‖ listening port (2, big-endian) ‖
///   name length (1) ‖ name (UTF-8, at most 64 bytes).
/// - `ping` (2) / `pong` (3): 8-byte big-endian token.
/// - `links` (4, protocol version 2): count (2, big-endian) ‖ that many
///   32-byte peer ids.
/// - `admission` (9), `admitted` (10), `refused` (11): the only messages of
///   a link whose handshake proved an invitation (see ``AdmissionRequest``),
///   besides the application messages the member sends before its answer.
/// - any other type: an ``ApplicationMessage``.
public enum LinkMessage: Sendable, Equatable {
    /// The first message each side sends after the handshake.
    case hello(PeerHello)
    /// A keep-alive asking for a ``pong(_:)`` with the same token.
    case ping(UInt64)
    /// The answer to a ``ping(_:)``.
    case pong(UInt64)
    /// The peers the sender is linked to now, sent whenever that changes,
    /// to peers of protocol version 2 or later: an op is not relayed to a
    /// peer linked to its author, who pushes it there itself.
    case links([PeerID])
    /// A joining device asks to be admitted with an invitation.
    case admission(AdmissionRequest)
    /// The member admitted it: the circle's keys, the first one first (the
    /// records, with its admission, came just before as application messages).
    case admitted([CircleKey])
    /// The member did not admit it, and why.
    case refused(AdmissionRefusal)
    /// A message of the application, carried unread.
    case application(ApplicationMessage)

    /// The types the transport uses itself; every other type is an application message's.
    public static let transportTypes: Set<UInt8> = [0, 2, 3, 4, 9, 10, 11]
    /// The most peer ids one ``links(_:)`` message may carry.
    public static let linksLimit = 1024

    /// The encoded message.
    public var encoded: [UInt8] {
        switch self {
        case .hello(let h):
            let name = Array(PlayerName.truncated(h.name).utf8)
            return [0, h.protocolVersion, UInt8(h.listenPort >> 8), UInt8(h.listenPort & 0xFF), UInt8(name.count)] + name
        case .ping(let token):
            return [2] + Self.bigEndian(token)
        case .pong(let token):
            return [3] + Self.bigEndian(token)
        case .links(let peers):
            let listed = peers.prefix(Self.linksLimit)
            return [4, UInt8(listed.count >> 8), UInt8(listed.count & 0xFF)] + listed.flatMap(\.bytes)
        case .admission(let request):
            return [9] + request.invitation.bytes + request.signature.bytes
        case .admitted(let keys):
            let listed = keys.prefix(255)
            return [10, UInt8(listed.count)] + listed.flatMap(\.bytes)
        case .refused(let reason):
            return [11, reason.rawValue]
        case .application(let message):
            return [message.type] + message.body
        }
    }

    private static func bigEndian(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * UInt64($0))) } }

    /// Decodes a message, refusing bad lengths and bad names in the
    /// transport's own; any other type is handed on as an application message.
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
            self = .application(ApplicationMessage(type: type, body: Array(body)))
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
    /// Another member made the invitation: only its maker admits with it.
    case elsewhere = 5
    /// The device was removed from the circle, and the invitation is not an admin's.
    case removedDevice = 6

    public var description: String {
        switch self {
        case .unknown: "the invitation is not known to the circle's member that answered"
        case .used: "the invite code was used already (each code admits one device); ask for a new one"
        case .expired: "the invite code has expired; ask for a new one"
        case .revoked: "the invite code was revoked; ask for a new one"
        case .unavailable: "the circle's member that answered cannot admit anyone now"
        case .elsewhere:
            "the invitation was made on another member's device, which did not answer: start that device's daemon (or give its address with --address)"
        case .removedDevice: "this device was removed from the circle: only an admin's invitation brings it back"
        }
    }
}

/// Who a peer says it is, beyond its proven key.
public struct PeerHello: Sendable, Equatable {
    /// The first version that understands ``LinkMessage/links(_:)``. The
    /// versions that bring the application's messages are the
    /// application's (SweeperMessages' `PeerCapabilities`).
    public static let linksVersion: UInt8 = 2

    /// The sender's peer protocol version.
    public var protocolVersion: UInt8
    /// The port the sender listens on (0 when it does not), so the receiver
    /// can dial back after a restart.
    public var listenPort: UInt16
    /// The sender's player name.
    public var name: String

    /// Creates a hello.
    public init(protocolVersion: UInt8, listenPort: UInt16, name: String) {
        self.protocolVersion = protocolVersion
        self.listenPort = listenPort
        self.name = name
    }
}
