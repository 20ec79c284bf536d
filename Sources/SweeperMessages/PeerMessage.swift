import SweeperConventions
import SweeperCrypto

/// What members tell each other over a link, above the transport: the
/// application messages of the peer protocol. The transport (SweeperNet)
/// carries each as a type byte and a body and knows none of them; this is
/// their one catalogue.
///
/// Encoding of the body, by type:
/// - `sync` (1): a ``SweeperSync`` sync message, as its own encoding.
/// - `presence` (5, protocol version 3): a ``PresenceNote``.
/// - `profile` (6, protocol version 3): a ``ProfileNote``.
/// - `play` (7, protocol version 4): a ``PlayNote``.
/// - `membership` (8, protocol version 6; records of version 2 from 9, and
///   only to peers of 9 or later; records of kind 7 only to peers of 10 or later): count (2, big-endian) ‖ that
///   many records, each as length (4, big-endian) ‖ an encoded membership record.
/// - `point` (12, protocol version 13): a ``PointNote``.
///
/// The transport's own types (0 hello, 2 ping, 3 pong, 4 links, 9 to 11
/// the invitation link's) are never application messages.
public enum PeerMessage: Sendable, Equatable {
    /// A sync message, encoded by SweeperSync.
    case sync([UInt8])
    /// Where a player is looking (their own, or relayed once from its author).
    case presence(PresenceNote)
    /// A player's name and colour (their own, or one the sender keeps).
    case profile(ProfileNote)
    /// A player's share of a game's played time (their own, or one the sender keeps).
    case play(PlayNote)
    /// Signed membership records of the circle (the sender's, or ones it
    /// keeps), each as its own encoding, parents before children.
    case membership([[UInt8]])
    /// A player pointing at a cell (their own, or relayed once from its author).
    case point(PointNote)
    /// Where a member listens (peer protocol 17).
    case addresses(AddressNote)

    /// The message types, as the type byte on the wire.
    public enum Kind: UInt8, Sendable, CaseIterable, CustomStringConvertible {
        case sync = 1
        case presence = 5
        case profile = 6
        case play = 7
        case membership = 8
        case point = 12
        case addresses = 13

        /// The first protocol version that understands this kind: a peer
        /// of an older version is never sent it.
        public var since: UInt8 {
            switch self {
            case .sync: 1
            case .presence, .profile: PeerCapabilities.presenceVersion
            case .play: PeerCapabilities.playVersion
            case .membership: PeerCapabilities.circleRolesVersion
            case .point: PeerCapabilities.pointVersion
            case .addresses: PeerCapabilities.addressesVersion
            }
        }

        public var description: String {
            switch self {
            case .sync: "sync message"
            case .presence: "presence note"
            case .profile: "profile"
            case .play: "share of played time"
            case .membership: "membership message"
            case .point: "point at a cell"
            case .addresses: "note of addresses"
            }
        }
    }

    /// The most records one ``membership(_:)`` message carries.
    public static let membershipLimit = 4096

    /// The message's type.
    public var kind: Kind {
        switch self {
        case .sync: .sync
        case .presence: .presence
        case .profile: .profile
        case .play: .play
        case .membership: .membership
        case .point: .point
        case .addresses: .addresses
        }
    }

    /// The message's body, as it follows the type byte.
    public var body: [UInt8] {
        switch self {
        case .sync(let bytes): return bytes
        case .presence(let note): return note.encoded
        case .profile(let note): return note.encoded
        case .play(let note): return note.encoded
        case .point(let note): return note.encoded
        case .addresses(let note): return note.encoded
        case .membership(let records):
            let listed = records.prefix(Self.membershipLimit)
            var out: [UInt8] = [UInt8(listed.count >> 8), UInt8(listed.count & 0xFF)]
            for r in listed {
                let n = UInt32(clamping: r.count)
                out += [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + r
            }
            return out
        }
    }

    /// The message as it travels inside the link: its type byte, then its body.
    public var encoded: [UInt8] { [kind.rawValue] + body }

    /// Decodes a whole message (its type byte, then its body).
    public init(decoding bytes: [UInt8]) throws(ByteDecodingError) {
        guard let type = bytes.first else { throw .truncated(field: "message type") }
        try self.init(type: type, body: Array(bytes.dropFirst()))
    }

    /// Decodes the body of a message of type `type`, refusing unknown
    /// types and malformed bodies.
    public init(type: UInt8, body: [UInt8]) throws(ByteDecodingError) {
        guard let kind = Kind(rawValue: type) else { throw .unknownKind(field: "message type", value: type) }
        switch kind {
        case .sync: self = .sync(body)
        case .presence: self = .presence(try PresenceNote(decoding: body))
        case .profile: self = .profile(try ProfileNote(decoding: body))
        case .play: self = .play(try PlayNote(decoding: body))
        case .membership: self = .membership(try Self.records(body))
        case .point: self = .point(try PointNote(decoding: body))
        case .addresses: self = .addresses(try AddressNote(decoding: body))
        }
    }

    private static func records(_ b: [UInt8]) throws(ByteDecodingError) -> [[UInt8]] {
        guard b.count >= 2 else { throw .truncated(field: "membership record count") }
        let count = Int(b[0]) << 8 | Int(b[1])
        guard count <= Self.membershipLimit else { throw .tooLarge(field: "membership record count", limit: Self.membershipLimit) }
        var records: [[UInt8]] = []
        var at = 2
        for _ in 0..<count {
            guard b.count - at >= 4 else { throw .truncated(field: "membership record length") }
            let n = Int(b[at]) << 24 | Int(b[at + 1]) << 16 | Int(b[at + 2]) << 8 | Int(b[at + 3])
            at += 4
            guard n > 0 else { throw .invalid(field: "membership record length", reason: "is zero") }
            guard b.count - at >= n else { throw .truncated(field: "membership record") }
            records.append(Array(b[at..<(at + n)]))
            at += n
        }
        guard at == b.count else { throw .trailingBytes(count: b.count - at) }
        return records
    }

    /// The most bytes of records one membership message carries (unless
    /// one record alone is larger): well under the transport's frame limit
    /// (16 MiB), whatever records a circle holds.
    public static let membershipByteBudget = 1 << 20

    /// `records` as membership messages, in order, each of at most
    /// ``membershipLimit`` records and ``membershipByteBudget`` bytes of
    /// them (a larger record goes alone).
    public static func membershipBatches(_ records: [[UInt8]]) -> [PeerMessage] {
        var out: [PeerMessage] = []
        var batch: [[UInt8]] = []
        var bytes = 0
        for record in records {
            if !batch.isEmpty && (batch.count == membershipLimit || bytes + record.count > membershipByteBudget) {
                out.append(.membership(batch))
                batch = []
                bytes = 0
            }
            batch.append(record)
            bytes += record.count
        }
        if !batch.isEmpty { out.append(.membership(batch)) }
        return out
    }
}

/// What a peer understands, from the protocol version its hello gave:
/// decided once per link, when the hello comes, and asked wherever a
/// message or a game might be too new for it.
///
/// Versions: 2 adds the transport's links message, 3 presence and
/// profiles, 4 played time, 5 the sync layer's interest message (which
/// games the sender takes), 6 membership records, 7 games whose creator
/// chose the players and the players and archive ops, 8 flood ops and the
/// sync layer's live pushes and chain-head signatures, 9 membership records
/// of version 2 (roles and per-author chains; peers of 6 to 8 are sent no
/// membership records, whose version 1 they alone read), 10 membership
/// records of kind 7 and summaries in parts, 11 descriptions of games
/// (sync message types 6 and 7), 12 hint and seeded ops, 13 points at a
/// cell (message type 12) and daily ops (op kind 12), 14 races, 15 chain
/// segments in the link's compact form (sync message type 8), 16 membership
/// derived by cuts that name records and forks that void the forker (no
/// message changes).
public struct PeerCapabilities: Sendable, Equatable {
    /// The peer protocol version this build speaks.
    public static let currentVersion: UInt8 = 18
    /// The first version that understands presence notes and profiles.
    public static let presenceVersion: UInt8 = 3
    /// The first version that understands shares of played time.
    public static let playVersion: UInt8 = 4
    /// The first version whose sync layer understands an interest (sync
    /// message type 2): older peers are sent every game and what they send
    /// outside this side's interest is dropped on arrival.
    public static let interestVersion: UInt8 = 5
    /// The first version that understands membership records.
    public static let membershipVersion: UInt8 = 6
    /// The first version that reads a genesis with players and the players
    /// and archive ops: older peers are not sent games that use them.
    public static let rolesVersion: UInt8 = 7
    /// The first version that reads flood ops, and takes a link peer's own
    /// ops as live pushes (sync message types 3 to 5): older peers are not
    /// sent games with flood ops, and are sent every op signed.
    public static let liveVersion: UInt8 = 8
    /// The first version that reads membership records of version 2
    /// (roles, per-author chains): the membership message goes only to
    /// peers of this version or later.
    public static let circleRolesVersion: UInt8 = 9
    /// The first version that reads membership records of kind 7 (a
    /// member's invitations turned off or on: older peers are not sent
    /// them) and summaries sent in parts (sync summary flag bit 1: older
    /// peers are sent one summary, of as many games as one message holds).
    public static let partsVersion: UInt8 = 10
    /// The first version that answers a request to describe games it
    /// holds (sync message types 6 and 7, for `games --available`): older
    /// peers are not asked, and their games are listed without details.
    public static let describeVersion: UInt8 = 11
    /// The first version that reads hint and seeded ops (op kinds 10 and
    /// 11): older peers are not sent games that have them.
    public static let hintsVersion: UInt8 = 12
    /// The first version that understands a point at a cell (message type
    /// 12): older peers are not sent one.
    public static let pointVersion: UInt8 = 13
    /// The first version that reads daily ops (op kind 12): older peers are
    /// not sent games that have one.
    public static let dailyVersion: UInt8 = 13
    /// The first version that reads race games (genesis option bit 3) and
    /// resign ops (op kind 13): older peers are not sent race games.
    public static let raceVersion: UInt8 = 14
    /// The first version that takes chain segments in the link's compact
    /// form (sync message type 8): older peers are sent ops messages.
    public static let chainsVersion: UInt8 = 15
    /// The first version that derives membership by cuts that name records
    /// and forks that void the forker: nothing on the wire changed, so it
    /// gates no message; older peers may count records this one voids.
    public static let cutsVersion: UInt8 = 16
    /// Address notes: members' addresses spread in the circle.
    public static let addressesVersion: UInt8 = 17
    /// The first version whose receivers let a live push give way to what
    /// its author kept (an op it pushed, then lost by stopping before its
    /// commit): an author pushes its move to it before the commit. Nothing
    /// on the wire changed.
    public static let provisionalVersion: UInt8 = 18

    /// The peer's protocol version (0 until its hello came).
    public let version: UInt8

    /// The capabilities of a peer that said `version` in its hello.
    public init(version: UInt8) {
        self.version = version
    }

    /// Whether the peer understands messages of `kind`.
    public func reads(_ kind: PeerMessage.Kind) -> Bool { version >= kind.since }
    /// Whether the peer can be told which games this side takes.
    public var readsInterest: Bool { version >= Self.interestVersion }
    /// Whether the peer reads games that use roles (players, archive).
    public var readsRoles: Bool { version >= Self.rolesVersion }
    /// Whether the peer reads flood ops and takes live pushes and head signatures.
    public var readsLive: Bool { version >= Self.liveVersion }
    /// Whether the peer reads invitation switches and summaries in parts.
    public var readsParts: Bool { version >= Self.partsVersion }
    /// Whether the peer describes the games it holds when asked.
    public var describesGames: Bool { version >= Self.describeVersion }
    /// Whether the peer reads hint and seeded ops.
    public var readsHints: Bool { version >= Self.hintsVersion }
    /// Whether the peer reads daily ops.
    public var readsDaily: Bool { version >= Self.dailyVersion }
    /// Whether the peer reads race games and resign ops.
    public var readsRace: Bool { version >= Self.raceVersion }
    /// Whether the peer takes chain segments in the link's compact form.
    public var takesChains: Bool { version >= Self.chainsVersion }
    /// Whether the peer takes this side's moves before they are kept, and
    /// lets those it holds unsigned give way to what this side kept.
    public var takesMovesBeforeKept: Bool { version >= Self.provisionalVersion }
}
