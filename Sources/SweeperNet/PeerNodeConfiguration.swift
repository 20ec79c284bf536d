import FoundationEssentials
import NIOCore
import SweeperCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
    /// How long a peer may stay silent before the link is dropped, while
    /// links ping every ``pingInterval``: a host that left the network shows
    /// as gone within this, on every screen. It grows with the ping
    /// interval on a node of many links (``keepAlivesPerSecond``).
    public var idleTimeout: TimeAmount = .seconds(3)
    /// How often a keep-alive is sent at most: often enough that a live
    /// link is never silent for ``idleTimeout``.
    public var pingInterval: Duration = .seconds(1)
    /// How many keep-alive rounds a node starts a second over all its
    /// links: with more links than this, each link's ping interval (and
    /// its idle timeout with it) grows so that the sum stays here. A family
    /// keeps a ping a second; a classroom's full mesh of 31 links pings each
    /// every 7.75 s and finds a host gone within 23 s, so that an idle
    /// device sends some 700 bytes a second rather than 6 KB.
    public var keepAlivesPerSecond = 4
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
/// `limit` in all and `perAddress` from one IP address.
///
/// When every slot an address may hold is taken, a new connection from it
/// takes the slot of the oldest one, which is closed; when every slot is
/// taken, the new connection takes the oldest slot of the address holding
/// the most. A device's own handshake takes a few milliseconds, so
/// connections that stall (a stranger's, or a host's that shares the
/// address of a real member, such as another user's on the same machine)
/// can keep nobody out: they only push one another out.
struct HandshakeSlots<Holder>: Sendable where Holder: Sendable {
    /// The most handshakes at once.
    let limit: Int
    /// The most handshakes at once from one IP address.
    let perAddress: Int
    /// One slot taken: by whom, from where.
    private struct Slot: Sendable {
        var ticket: UInt64
        var ip: String
        var holder: Holder
    }
    /// Handshakes under way, oldest first.
    private var slots: [Slot] = []
    private var nextTicket: UInt64 = 0

    init(limit: Int, perAddress: Int) {
        self.limit = max(1, limit)
        self.perAddress = max(1, perAddress)
    }

    /// How many handshakes are under way from `ip` (all of them: `nil`).
    func count(from ip: String? = nil) -> Int {
        guard let ip else { return slots.count }
        return slots.reduce(0) { $0 + ($1.ip == ip ? 1 : 0) }
    }

    /// Takes a slot for `holder`, a connection from `ip`. Returns the
    /// ticket that gives it back, and the holder pushed out to make room
    /// (to be closed), if any.
    mutating func take(from ip: String, holder: Holder) -> (ticket: UInt64, evicted: Holder?) {
        var evicted: Holder?
        if count(from: ip) >= perAddress, let oldest = slots.firstIndex(where: { $0.ip == ip }) {
            evicted = slots.remove(at: oldest).holder
        } else if slots.count >= limit {
            var counts: [String: Int] = [:]
            for slot in slots { counts[slot.ip, default: 0] += 1 }
            let most = counts.values.max() ?? 0
            if let oldest = slots.firstIndex(where: { counts[$0.ip] == most }) {
                evicted = slots.remove(at: oldest).holder
            }
        }
        nextTicket += 1
        slots.append(Slot(ticket: nextTicket, ip: ip, holder: holder))
        return (nextTicket, evicted)
    }

    /// Gives back the slot `ticket` took (nothing when it was taken over).
    mutating func give(back ticket: UInt64) {
        slots.removeAll { $0.ticket == ticket }
    }
}
