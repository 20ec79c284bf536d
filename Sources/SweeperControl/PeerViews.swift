import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The peers as `peers` and `peer-changed` events show them.

/// Where a peer stands, as `peers` reports it.
public enum PeerState: String, Codable, Equatable, Sendable, CaseIterable {
    /// A link is up.
    case connected
    /// A dial is under way.
    case connecting
    /// Seen on the network, no link yet.
    case discovered
    /// Known, but neither seen nor linked now.
    case offline
}

/// A peer as reported by `peers` and peer events.
public struct PeerInfo: Codable, Equatable, Sendable {
    /// Whether this daemon and the peer hold the same ops.
    public struct Sync: Codable, Equatable, Sendable {
        /// Ops this daemon holds that the peer does not (as far as its last summary says).
        public var theyLack: Int
        /// Ops the peer holds that this daemon does not.
        public var weLack: Int
        /// Whether neither side lacks anything.
        public var inSync: Bool { theyLack == 0 && weLack == 0 }

        /// Creates a sync state.
        public init(theyLack: Int, weLack: Int) {
            self.theyLack = theyLack
            self.weLack = weLack
        }

        private enum CodingKeys: String, CodingKey { case theyLack, weLack, inSync }
        /// Decodes the two counts (`inSync` is derived).
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            theyLack = try c.decode(Int.self, forKey: .theyLack)
            weLack = try c.decode(Int.self, forKey: .weLack)
        }
        /// Encodes the counts and `inSync`.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(theyLack, forKey: .theyLack)
            try c.encode(weLack, forKey: .weLack)
            try c.encode(inSync, forKey: .inSync)
        }
    }

    /// The peer's printable id.
    public var peer: String
    /// The player's name.
    public var name: String
    /// Addresses it was seen or linked at.
    public var addresses: [String]
    /// `connected`, `connecting`, `discovered` or `offline`.
    public var state: PeerState
    /// How it became known: `mdns`, `static`, `incoming`.
    public var via: [String]
    /// When anything was last heard from it, ms since 1970, if ever.
    public var lastSeenAt: Int64?
    /// The last keep-alive round trip, in whole milliseconds.
    public var roundTripMillis: Int?
    /// The sync state, while linked.
    public var sync: Sync?
    /// Whether it is a daemon of another circle (seen by mDNS, never linked).
    public var otherCircle: Bool
    /// The peer protocol version its hello gave, while linked.
    public var protocolVersion: Int?
    /// For a linked peer whose Sweeper is older than the daemon's: what it
    /// misses and what to do, as the daemon (which knows what each peer
    /// protocol version carries) words it; absent otherwise.
    public var versionNote: String?
    /// When it was last heard from over a link, ms since 1970 (an mDNS sighting
    /// is not hearing from it); absent when never.
    public var lastHeardAt: Int64?
    /// The names of the players the peer hosts (members it admitted with
    /// their own keys, who play from browsers paired to it); absent when none.
    public var hostNames: [String]?

    /// Creates a peer report.
    public init(
        peer: String, name: String, addresses: [String], state: PeerState, via: [String], lastSeenAt: Int64?,
        roundTripMillis: Int?, sync: Sync?, otherCircle: Bool
    ) {
        self.peer = peer
        self.name = name
        self.addresses = addresses
        self.state = state
        self.via = via
        self.lastSeenAt = lastSeenAt
        self.roundTripMillis = roundTripMillis
        self.sync = sync
        self.otherCircle = otherCircle
    }
}

extension PeerInfo {
    /// How a person reads this peer's state: the one wording `sweeper
    /// peers`, the viewer's status line and its peers overlay all use.
    /// "in sync" is said only of a linked peer whose last summary shows that
    /// neither side lacks an op.
    public var stateWords: String {
        if otherCircle { return "other circle" }
        switch state {
        case .connected:
            guard let sync else { return "linked, comparing" }
            return sync.inSync ? "in sync" : "catching up"
        case .connecting: return "connecting"
        case .discovered: return "seen, not linked"
        case .offline:
            guard let heard = lastHeardAt else { return "never reached" }
            return "offline since " + Self.clock(at: heard)
        }
    }

    /// An instant (ms since 1970): `18:05` within the 12 hours before
    /// `now`, else the full date.
    static func clock(at millis: Int64, now: Date = Date()) -> String {
        let ago = ControlFormatting.secondsSince(millis, now: now)
        let then = now.addingTimeInterval(-ago)
        guard ago < 12 * 3600 else { return ControlFormatting.date(then.timeIntervalSince1970) }
        return String(localTime: then.timeIntervalSince1970, format: "%H:%M")
    }

    /// What each side lacks, while linked and not in sync (`they lack 3, we lack 0`).
    public var lackWords: String? {
        guard state == .connected, let sync, !sync.inSync else { return nil }
        return "they lack \(sync.theyLack), we lack \(sync.weLack)"
    }
}

/// A static peer (`--peer`, `connect`, a peer met before) whose last dial failed.
public struct UnreachedPeerInfo: Codable, Equatable, Sendable {
    /// The `host:port` dialled.
    public var address: String
    /// Why the last dial failed, in words.
    public var reason: String
    /// When it failed, ms since 1970.
    public var failedAt: Int64

    /// Creates a report.
    public init(address: String, reason: String, failedAt: Int64) {
        self.address = address
        self.reason = reason
        self.failedAt = failedAt
    }
}

extension ControlFormatting {
    /// What to say of mDNS where peers are listed: nothing while it runs;
    /// otherwise that it is not finding peers, and what to do.
    public static func mdnsNote(_ status: String?) -> String? {
        guard let status, !status.hasPrefix("running") else { return nil }
        if status == "disabled" {
            return "mDNS is off (--no-mdns or mdns = false): peers come only from --peer and `sweeper connect HOST:PORT`."
        }
        return "mDNS is \(status): no peers are found on the network. Start avahi-daemon "
            + "(systemctl start avahi-daemon), or name a peer with `sweeper connect HOST:PORT`."
    }

    /// The `peers` report: the table, the static peers not reached (with
    /// `--all`), and a word on mDNS when it is not running.
    public static func peers(_ result: Commands.Peers.Result) -> String {
        var out = peers(result.peers)
        if let unreached = result.unreached, !unreached.isEmpty {
            out +=
                "\nNot reached:\n"
                + table(
                    ["ADDRESS", "WHY", "WHEN"],
                    unreached.map {
                        let ago = secondsSince($0.failedAt)
                        return [$0.address, $0.reason, ago < 1 ? "now" : "\(Int(ago))s ago"]
                    })
        }
        let notes = result.peers.compactMap(\.versionNote)
        if !notes.isEmpty { out += "\n" + notes.map { $0 + "\n" }.joined() }
        if let presence = result.presence, !presence.isEmpty { out += "\n" + watching(presence) }
        if let note = mdnsNote(result.mdns) { out += "\n" + note + "\n" }
        return out
    }

    /// Who is looking at which game, a line each: `Mum (you) is in game
    /// 9478de3f at 3,4`.
    public static func watching(_ presence: [PresenceInfo]) -> String {
        presence.compactMap { p -> String? in
            guard let game = p.game else { return nil }
            let at = p.x.flatMap { x in p.y.map { y in " at \(x),\(y)" } } ?? ""
            return "\(p.name)\(p.own == true ? " (you)" : "") is in game \(shortID(game))\(at)\n"
        }.joined()
    }
}

/// Where a player is looking: a game open in their viewer and the cell
/// under its cursor. In `presence` events, the `presence` answer, `status`
/// and `peers`.
public struct PresenceInfo: Codable, Equatable, Sendable {
    /// The player's printable peer id.
    public var peer: String
    /// The player's name.
    public var name: String
    /// The game their viewer shows (full id); absent when they left.
    public var game: String?
    /// The cursor's column; absent when they left.
    public var x: Int?
    /// The cursor's row; absent when they left.
    public var y: Int?
    /// The colour the player chose (1–8, see ``PlayerColours``); absent for
    /// the one derived from their id.
    public var colour: Int?
    /// True for this daemon's own player; absent otherwise.
    public var own: Bool?
    /// Their letter beside a cell, the same on every screen
    /// (``PlayerLetters``); absent from older daemons.
    public var letter: String?

    /// Creates a presence.
    public init(peer: String, name: String, game: String? = nil, x: Int? = nil, y: Int? = nil, colour: Int? = nil, own: Bool? = nil) {
        self.colour = colour
        self.peer = peer
        self.name = name
        self.game = game
        self.x = x
        self.y = y
        self.own = own
    }
}

/// The colours a player may choose for their profile, by number (1–8, the
/// order of the viewer's palette); 0, `auto`, is the one derived from the
/// peer id.
public enum PlayerColours {
    /// The names, from colour 1.
    public static let names = ["blue", "green", "magenta", "cyan", "red", "yellow", "light-blue", "pink"]
    /// Every value `--colour` takes.
    public static let choices = ["auto"] + names

    /// The number of a colour name (0 for `auto`), nil for an unknown one.
    public static func index(of name: String) -> Int? {
        let lower = name.lowercased()
        if lower == "auto" { return 0 }
        return names.firstIndex(of: lower).map { $0 + 1 }
    }

    /// The name of a colour number (`auto` for 0 or an unknown number).
    public static func name(of index: Int) -> String {
        (1...names.count).contains(index) ? names[index - 1] : "auto"
    }
}
