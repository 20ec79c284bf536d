import FoundationEssentials
import NIOCore
import NIOPosix
import SweeperConventions
import SweeperCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a node knows of the other daemons, without sockets: the peers of
/// its circle (how each became known, where it was seen, its name, whether
/// a dial loop runs for it), the daemons of other circles that mDNS shows,
/// and the last sighting of every daemon, so that a change of circle can
/// sort them again. ``PeerNode`` holds one and asks it what to dial and what
/// `sweeper peers` shows; the links themselves stay with the node.
struct PeerDirectory: Sendable {
    /// One peer of this circle.
    struct Record: Sendable, Equatable {
        /// Its player name, from its hello or its mDNS record.
        var name: String?
        /// Addresses it was seen or linked at, first first.
        var addresses: [String] = []
        /// How it became known, first first.
        var origins: [PeerOrigin] = []
        /// When anything was last heard from it.
        var lastSeen: Date?
        /// Where mDNS last saw it listening.
        var sightedAddresses: [SocketAddress] = []
        /// Whether mDNS sees it now.
        var sighted = false
        /// Whether a dial loop runs for it.
        var dialing = false
        /// Its circle tag, when seen by mDNS.
        var circleTag: String?
        /// Whether a link to it ever came up.
        var everLinked = false
        /// When it was last heard from over a link (an mDNS sighting is not
        /// hearing from it: a dead host's record lingers in caches).
        var lastHeard: Date?
        /// Whether the last dial to it failed (cleared when a link comes up).
        var dialFailed = false
        /// Where its signed address note, relayed by members, says it listens.
        var gossipAddresses: [SocketAddress] = []
    }

    /// A daemon of another circle that mDNS shows.
    struct Foreign: Sendable, Equatable {
        var sighting: PeerSighting
        var lastSeen: Date
    }

    /// What the node tells the directory of a live link, for the snapshot.
    struct LinkInfo: Sendable {
        /// The link's id.
        var id: UInt64
        /// Its last keep-alive round trip.
        var roundTrip: Duration?
        /// When it last read a message of the peer's.
        var heard: Date?
    }

    /// This node's own id: its own sightings are ignored.
    let ownID: PeerID
    /// The peers of this circle.
    private(set) var peers: [PeerID: Record] = [:]
    /// Daemons of other circles seen now.
    private(set) var foreign: [PeerID: Foreign] = [:]
    /// The last mDNS sighting of every daemon, of any circle.
    private(set) var sightings: [PeerID: PeerSighting] = [:]
    /// Peers a dial is under way to.
    private(set) var dialsInFlight: Set<PeerID> = []

    /// An empty directory for the node `ownID`.
    init(ownID: PeerID) {
        self.ownID = ownID
    }

    // MARK: mDNS

    /// Records an mDNS sighting by a node of circle `circleTag`: a member of
    /// that circle is recorded as seen, and true is returned when a dial
    /// loop must start for it (none runs yet); a daemon of another circle is
    /// only remembered, for `peers --all`.
    mutating func sighted(_ sighting: PeerSighting, circleTag: String, now: Date = Date()) -> Bool {
        sighted(sighting, circleTags: [circleTag], now: now)
    }

    /// Records an mDNS sighting by a node whose circle has had the tags
    /// `circleTags` (its current key's and earlier ones': a member that
    /// missed a new key still announces an old tag).
    mutating func sighted(_ sighting: PeerSighting, circleTags: Set<String>, refused: Set<PeerID> = [], now: Date = Date()) -> Bool {
        guard sighting.peer != ownID else { return false }
        sightings[sighting.peer] = sighting
        guard circleTags.contains(sighting.circleTag), !refused.contains(sighting.peer) else {
            foreign[sighting.peer] = Foreign(sighting: sighting, lastSeen: now)
            peers[sighting.peer]?.sighted = false
            return false
        }
        foreign[sighting.peer] = nil
        var record = peers[sighting.peer] ?? Record()
        record.name = record.name ?? PlayerName.cleaned(sighting.name)
        record.circleTag = sighting.circleTag
        record.sighted = true
        record.lastSeen = now
        record.sightedAddresses = sighting.addresses
        for a in sighting.addresses.map(\.hostPortText) where !record.addresses.contains(a) { record.addresses.append(a) }
        if !record.origins.contains(.mdns) { record.origins.append(.mdns) }
        let startDialling = !record.dialing
        record.dialing = true
        peers[sighting.peer] = record
        return startDialling
    }

    /// Records that mDNS no longer sees `peer`. A peer only mDNS ever knew,
    /// never linked, leaves the directory; one linked before stays, offline.
    mutating func sightingLost(_ peer: PeerID) {
        foreign[peer] = nil
        sightings[peer] = nil
        guard let record = peers[peer] else { return }
        if !record.everLinked && record.origins == [.mdns] {
            peers[peer] = nil
        } else {
            peers[peer]?.sighted = false
        }
    }

    /// Sorts every daemon seen so far again for a node now of circle
    /// `circleTag`: members of it are recorded as seen, members of the old
    /// one become another circle's. Returns the peers a dial loop must
    /// start for.
    mutating func circleChanged(to circleTag: String, now: Date = Date()) -> [PeerID] {
        circleChanged(to: [circleTag], now: now)
    }

    /// Sorts every daemon seen so far again for a node whose circle has
    /// had the tags `circleTags`, leaving out `refused` peers.
    mutating func circleChanged(to circleTags: Set<String>, refused: Set<PeerID> = [], now: Date = Date()) -> [PeerID] {
        sightings.values.sorted { $0.peer < $1.peer }.filter { sighted($0, circleTags: circleTags, refused: refused, now: now) }.map(\.peer)
    }

    /// Every daemon mDNS sees now, of any circle.
    var allSightings: [PeerSighting] { sightings.values.sorted { $0.peer < $1.peer } }

    /// The circle tag `peer` announced last, when mDNS sees it.
    func sightedTag(of peer: PeerID) -> String? { sightings[peer]?.circleTag }

    // MARK: Dialling

    /// Where to dial `peer` (its sighted addresses) and whether mDNS still
    /// sees it; nil for a peer not known.
    func dialPlan(_ peer: PeerID) -> (addresses: [SocketAddress], sighted: Bool, gossiped: [SocketAddress])? {
        guard let record = peers[peer] else { return nil }
        let gossiped = record.gossipAddresses.filter { !record.sightedAddresses.contains($0) }
        return (record.sightedAddresses + gossiped, record.sighted || !gossiped.isEmpty, gossiped)
    }

    // MARK: Addresses members relay

    /// Records where `peer`'s address note says it listens (a member's,
    /// checked by the caller): it is dialled there as long as the note
    /// lives. Returns true when a dial loop must start for it (none runs
    /// yet). With `seen` (the note was signed just now) it counts as seen:
    /// news of it came through the members that relayed it.
    mutating func gossiped(_ peer: PeerID, addresses: [SocketAddress], refused: Set<PeerID> = [], seen: Bool, now: Date = Date()) -> Bool {
        guard peer != ownID, !refused.contains(peer) else { return false }
        // A note of no address makes no peer to list or dial; one known already is seen.
        guard !addresses.isEmpty || peers[peer] != nil else { return false }
        var record = peers[peer] ?? Record()
        record.gossipAddresses = addresses
        if seen { record.lastSeen = now }
        for a in addresses.map(\.hostPortText) where !record.addresses.contains(a) { record.addresses.append(a) }
        if !addresses.isEmpty, !record.origins.contains(.gossip) { record.origins.append(.gossip) }
        let startDialling = !record.dialing && !addresses.isEmpty
        if startDialling { record.dialing = true }
        peers[peer] = record
        return startDialling
    }

    /// Forgets the addresses `peer`'s note gave (it expired, or its author
    /// left the circle). A peer only known so, never linked, leaves the directory.
    mutating func gossipExpired(_ peer: PeerID) {
        guard let record = peers[peer] else { return }
        if !record.everLinked && record.origins == [.gossip] {
            peers[peer] = nil
        } else {
            peers[peer]?.gossipAddresses = []
        }
    }

    /// Notes that a dial to `peer` is under way, or over.
    mutating func setDialing(_ peer: PeerID, inFlight: Bool) {
        if inFlight { dialsInFlight.insert(peer) } else { dialsInFlight.remove(peer) }
    }

    /// Notes that the dial loop of `peer` stopped (mDNS lost it).
    mutating func stopDialling(_ peer: PeerID) { peers[peer]?.dialing = false }

    // MARK: Links

    /// Records a link to `peer` that came up, known by `origin`, at `remote`
    /// (an incoming connection's address is not one to dial, so not kept).
    mutating func linked(_ peer: PeerID, origin: PeerOrigin, remote: String, now: Date = Date()) {
        var record = peers[peer] ?? Record()
        record.everLinked = true
        record.dialFailed = false
        if !record.origins.contains(origin) { record.origins.append(origin) }
        if !record.addresses.contains(remote) && origin != .incoming { record.addresses.append(remote) }
        record.lastSeen = now
        record.lastHeard = now
        peers[peer] = record
    }

    /// Records that a link to `peer` closed.
    mutating func unlinked(_ peer: PeerID, now: Date = Date()) {
        peers[peer]?.lastSeen = now
        peers[peer]?.lastHeard = now
    }

    /// Records that dialling `peer` failed at every address mDNS gave: a
    /// sighting alone no longer counts as seeing it.
    mutating func dialFailed(_ peer: PeerID) {
        peers[peer]?.dialFailed = true
    }

    /// Records the name `peer` gave in its hello (cleaned of control
    /// characters; an empty name changes nothing).
    mutating func named(_ peer: PeerID, _ name: String) {
        let clean = PlayerName.cleaned(name)
        if !clean.isEmpty { peers[peer]?.name = clean }
    }

    /// The address a peer that connected from `ip` and listens on
    /// `listenPort` can be dialled at later (`host:port`), or nil: when it
    /// does not listen, or `ip` is IPv6 link-local, which cannot be dialled
    /// without the interface it was reached on.
    static func dialBack(ip: String?, listenPort: UInt16) -> String? {
        guard listenPort != 0, let ip, !LinkLocalAddress.isUnscoped(ip) else { return nil }
        return hostPortText(host: ip, port: Int(listenPort))
    }

    /// The later of two times, either of which may be unknown.
    private static func later(_ a: Date?, _ b: Date?) -> Date? {
        guard let a, let b else { return a ?? b }
        return max(a, b)
    }

    // MARK: What `peers` shows

    /// Every known peer given the live `links` by peer: linked ones first,
    /// then by name and id; then (with `includeOtherCircles`) daemons of
    /// other circles seen on the network, by id.
    func snapshot(links: [PeerID: LinkInfo], includeOtherCircles: Bool = false) -> [PeerSnapshot] {
        var out: [PeerSnapshot] = []
        for (id, record) in peers {
            let link = links[id]
            // Say what is known: a peer once linked, or whose dials fail, is
            // offline until a link comes up again, however mDNS's caches
            // still list it and however often it is dialled meanwhile.
            let state: PeerLinkState =
                if link != nil { .connected } else if record.everLinked || record.dialFailed { .offline } else if dialsInFlight.contains(id) {
                    .connecting
                } else if record.sighted { .discovered } else { .offline }
            out.append(
                PeerSnapshot(
                    id: id, name: record.name, addresses: record.addresses, state: state, origins: record.origins,
                    lastSeen: Self.later(record.lastSeen, link?.heard), roundTrip: link?.roundTrip, linkID: link?.id,
                    circleTag: record.circleTag, otherCircle: false, lastHeard: Self.later(record.lastHeard, link?.heard)))
        }
        out.sort { ($0.state == .connected ? 0 : 1, $0.name ?? "", $0.id) < ($1.state == .connected ? 0 : 1, $1.name ?? "", $1.id) }
        if includeOtherCircles {
            for (id, record) in foreign.sorted(by: { $0.key < $1.key }) {
                out.append(
                    PeerSnapshot(
                        id: id, name: PlayerName.cleaned(record.sighting.name), addresses: record.sighting.addresses.map(\.hostPortText), state: .discovered,
                        origins: [.mdns], lastSeen: record.lastSeen, roundTrip: nil, linkID: nil,
                        circleTag: record.sighting.circleTag, otherCircle: true))
            }
        }
        return out
    }
}

/// How a peer became known.
public enum PeerOrigin: String, Sendable, Codable, Comparable {
    /// Found by mDNS.
    case mdns
    /// Given by `--peer`, the config file or `sweeper connect`.
    case `static`
    /// It connected to us.
    case incoming
    /// Dialled where its signed address note, relayed by members, says it listens.
    case gossip

    public static func < (a: PeerOrigin, b: PeerOrigin) -> Bool { a.rawValue < b.rawValue }
}

/// Where a known peer stands.
public enum PeerLinkState: String, Sendable, Codable {
    /// A link is up.
    case connected
    /// A dial is under way.
    case connecting
    /// Seen on the network, no link yet.
    case discovered
    /// Not linked, and known not to be there: linked once (until a link
    /// comes up again), or its dials fail, whatever mDNS caches still
    /// say; or neither seen nor linked now.
    case offline
}

/// One known peer, as `sweeper peers` shows it.
public struct PeerSnapshot: Sendable {
    /// The peer's identity.
    public var id: PeerID
    /// Its player name, from its hello or its mDNS record.
    public var name: String?
    /// Addresses it was seen or linked at.
    public var addresses: [String]
    /// Where it stands.
    public var state: PeerLinkState
    /// How it became known (the first way first).
    public var origins: [PeerOrigin]
    /// When anything was last heard from it.
    public var lastSeen: Date?
    /// The last keep-alive round trip.
    public var roundTrip: Duration?
    /// The link, when connected.
    public var linkID: UInt64?
    /// Its circle tag, when seen by mDNS.
    public var circleTag: String?
    /// Whether it belongs to another circle (seen, never linked).
    public var otherCircle: Bool
    /// When it was last heard from over a link; nil when never.
    public var lastHeard: Date? = nil
}

/// A sighting of a daemon on the network, from mDNS.
public struct PeerSighting: Sendable, Equatable {
    /// The daemon's identity (from its TXT record).
    public var peer: PeerID
    /// Its player name.
    public var name: String
    /// Its circle tag.
    public var circleTag: String
    /// Where it listens.
    public var addresses: [SocketAddress]

    /// Creates a sighting.
    public init(peer: PeerID, name: String, circleTag: String, addresses: [SocketAddress]) {
        self.peer = peer
        self.name = name
        self.circleTag = circleTag
        self.addresses = addresses
    }
}

/// A static peer (`--peer`, `connect`, a peer met before) whose last dial
/// failed, as `sweeper peers --all` shows it.
public struct UnreachedPeer: Sendable, Equatable {
    /// The `host:port` dialled.
    public var address: String
    /// Why the last dial failed, in words.
    public var reason: String
    /// When it failed.
    public var since: Date

    /// Creates a report.
    public init(address: String, reason: String, since: Date) {
        self.address = address
        self.reason = reason
        self.since = since
    }

    /// A dial's failure in a person's words: refused, no route, timed out,
    /// a daemon of another circle, or the system's own words.
    public static func explain(_ error: any Error) -> String {
        if let connection = error as? NIOConnectionError {
            if let first = connection.connectionErrors.first { return explain(first.error) }
            if connection.dnsAError != nil || connection.dnsAAAAError != nil { return "the host name does not resolve" }
        }
        if let io = error as? IOError {
            switch io.errnoCode {
            case ECONNREFUSED: return "refused: nothing listens there"
            case EHOSTUNREACH, ENETUNREACH: return "no route to the host"
            case ETIMEDOUT: return "timed out"
            default: return String(cString: strerror(io.errnoCode))
            }
        }
        if case ChannelError.connectTimeout = error { return "timed out" }
        switch error as? PeerConnectionError {
        case .closedDuringHandshake?: return "it closed the handshake: a daemon of another circle, or not a Sweeper daemon"
        case .handshakeTimedOut?: return "the handshake timed out"
        default: return "\(error)"
        }
    }
}

/// IPv6 link-local addresses (fe80::/10), which name a host only together
/// with the interface it is reached on.
public enum LinkLocalAddress {
    /// Whether `host` is an IPv6 link-local address without a `%interface`
    /// scope: connecting to it fails with "Invalid argument".
    public static func isUnscoped(_ host: String) -> Bool {
        let h = host.lowercased()
        return ["fe8", "fe9", "fea", "feb"].contains { h.hasPrefix($0) } && h.contains(":") && !h.contains("%")
    }
}
