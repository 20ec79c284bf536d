import Foundation
import NIOCore
import SweeperCrypto

/// This daemon's credentials on the network.
public struct NodeCredentials: Sendable {
    /// The circle whose members it talks to.
    public var circle: CircleKey
    /// Its identity.
    public var identity: SigningIdentity
    /// Its player name, sent to peers in the hello.
    public var name: String
    /// The circle's earlier keys (before devices were removed): handshakes
    /// that prove one are accepted too, so a member that missed a new key
    /// still links and gets it; peers announcing an earlier key's tag are
    /// dialled with that key.
    public var earlierKeys: [CircleKey]
    /// Devices removed from the circle: never linked, whatever key they hold.
    public var refused: Set<PeerID>
    /// When set, the only devices linked (the circle's members, once its
    /// key has changed and holding a key no longer makes a member); `nil`
    /// links anybody whose handshake proves a key.
    public var members: Set<PeerID>?
    /// The circle's invitations (by their public key) and the key a joining
    /// device's handshake proves for each: such a handshake makes an
    /// invitation link, on which the device may only ask to be admitted.
    public var invitations: [PeerID: CircleKey] = [:]

    /// Creates credentials.
    public init(
        circle: CircleKey, identity: SigningIdentity, name: String, earlierKeys: [CircleKey] = [], refused: Set<PeerID> = [],
        members: Set<PeerID>? = nil, invitations: [PeerID: CircleKey] = [:]
    ) {
        self.invitations = invitations
        self.circle = circle
        self.identity = identity
        self.name = name
        self.earlierKeys = earlierKeys
        self.refused = refused
        self.members = members
    }

    /// Whether a device that finished a handshake may link.
    public func admits(_ peer: PeerID) -> Bool {
        !refused.contains(peer) && (members?.contains(peer) ?? true)
    }

    /// Every key a handshake may prove: the current one first.
    public var keys: [CircleKey] { [circle] + earlierKeys }

    /// The invitation whose handshake key is `key`, if any.
    public func invitation(provenBy key: CircleKey) -> PeerID? { invitations.first { $0.value == key }?.key }

    /// The tags of every key.
    public var tags: Set<String> { Set(keys.map(\.tag)) }

    /// The key whose tag is `tag`, if any.
    public func key(tagged tag: String) -> CircleKey? { keys.first { $0.tag == tag } }
}

/// Limits and timings of peer connections.
public struct PeerNodeConfiguration: Sendable {
    /// The largest frame accepted (bytes of ciphertext).
    public var frameLimit = 16 << 20
    /// The largest frame accepted before the link is up (handshake messages
    /// are 64 and 112 bytes, the stream header 24).
    public var handshakeFrameLimit = 1024
    /// The most incoming connections in their handshake at once; more are
    /// closed at once, so strangers cannot hold many sockets open.
    public var handshakeLimit = 64
    /// The most incoming connections in their handshake at once from one
    /// IP address, so one host cannot take every slot.
    public var handshakeLimitPerAddress = 8
    /// How long a handshake may take.
    public var handshakeTimeout: TimeAmount = .seconds(10)
    /// How long a peer may stay silent before the link is dropped: a host
    /// that left the network shows as gone within this, on every screen.
    public var idleTimeout: TimeAmount = .seconds(3)
    /// How often a keep-alive is sent: often enough that a live link is
    /// never silent for ``idleTimeout``.
    public var pingInterval: Duration = .seconds(1)
    /// The first reconnect delay; it doubles per failure up to ``backoffCap``, with ±20% jitter.
    public var backoffBase: Duration = .milliseconds(500)
    /// The longest reconnect delay.
    public var backoffCap: Duration = .seconds(30)
    /// How many failures in a row double the reconnect delay at most (so
    /// the arithmetic stays finite however long a peer stays away).
    public var backoffDoublingLimit = 20
    /// How long a dial may take to connect.
    public var connectTimeout: TimeAmount = .seconds(5)
    /// How often a dial loop whose peer is linked looks again whether the link is still up.
    public var linkedRecheckInterval: Duration = .seconds(1)
    /// How long the peer with the larger id waits before dialling a peer
    /// mDNS found, so that usually only the smaller one dials.
    public var largerIDDialDelay: Duration = .milliseconds(1500)
    /// How many bytes may wait to be sent on one link before new sync
    /// messages are dropped (anti-entropy repairs what a drop loses).
    public var sendBufferLimit = 64 << 20

    /// The defaults.
    /// The protocol version this node's hello announces. The transport
    /// needs only ``PeerHello/linksVersion``; the application above it
    /// sets the version its messages speak.
    public var protocolVersion: UInt8 = PeerHello.linksVersion

    public init() {}
}

/// The slots incoming connections hold while in their handshake: at most
/// `limit` in all and `perAddress` from one IP address, so that strangers
/// cannot hold many sockets open and one host cannot take every slot.
struct HandshakeSlots: Sendable {
    /// The most handshakes at once.
    let limit: Int
    /// The most handshakes at once from one IP address.
    let perAddress: Int
    /// Handshakes under way, by IP address.
    private var inFlight: [String: Int] = [:]

    init(limit: Int, perAddress: Int) {
        self.limit = limit
        self.perAddress = perAddress
    }

    /// Takes a slot for a connection from `ip`, or says why there is none.
    mutating func take(from ip: String) -> PeerConnectionError? {
        let total = inFlight.values.reduce(0, +)
        let fromHere = inFlight[ip] ?? 0
        if fromHere >= perAddress { return .tooManyHandshakes(inFlight: fromHere, limit: perAddress) }
        if total >= limit { return .tooManyHandshakes(inFlight: total, limit: limit) }
        inFlight[ip] = fromHere + 1
        return nil
    }

    /// Gives back a slot taken by ``take(from:)``.
    mutating func give(back ip: String) {
        guard let n = inFlight[ip] else { return }
        inFlight[ip] = n > 1 ? n - 1 : nil
    }
}
