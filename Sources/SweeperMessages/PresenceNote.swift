import SweeperConventions
import SweeperCrypto

/// Where a player is looking: a game and the cell under their cursor.
public struct PresenceSpot: Sendable, Hashable {
    /// The length of a game id in bytes.
    public static let gameIDByteCount = 16
    /// The largest coordinate a spot may name (boards are at most 500 wide).
    public static let coordinateLimit = 499

    /// The game's id (16 bytes).
    public let game: [UInt8]
    /// The cursor's column.
    public let x: Int
    /// The cursor's row.
    public let y: Int

    /// A spot; `nil` when the game id is not 16 bytes or a coordinate is out of range.
    public init?(game: [UInt8], x: Int, y: Int) {
        guard game.count == Self.gameIDByteCount, (0...Self.coordinateLimit).contains(x), (0...Self.coordinateLimit).contains(y)
        else { return nil }
        self.game = game
        self.x = x
        self.y = y
    }
}

/// A player's presence as it travels between daemons: which game their
/// viewer shows and where its cursor is, or that they left. Signed by the
/// author, so a relay cannot forge or alter it; never stored.
///
/// Encoding (the body of a ``PeerMessage/presence(_:)``):
///
///     author key (32) ‖ serial (LEB128) ‖ state (1 byte: 0 gone, 1 here)
///     ‖ when here: game id (16) ‖ x (LEB128) ‖ y (LEB128)
///     ‖ signature (64): Ed25519 over "sweeper/presence/v1\0" ‖ the bytes before it
///
/// The serial grows with every note of one author; a receiver keeps the
/// note with the highest serial while it lives.
public struct PresenceNote: Sendable, Hashable {
    static let signatureDomain = Array("sweeper/presence/v1\0".utf8)

    /// Whose presence this is.
    public let author: PeerID
    /// Grows with every note of the author (its milliseconds since 1970 when sent, made to grow).
    public let serial: UInt64
    /// Where the author is looking; nil when they left.
    public let spot: PresenceSpot?
    /// The author's signature.
    public let signature: Signature

    /// The signed bytes.
    var signedBytes: [UInt8] { Self.signedBytes(author: author, serial: serial, spot: spot) }

    static func signedBytes(author: PeerID, serial: UInt64, spot: PresenceSpot?) -> [UInt8] {
        var out = ByteWriter(capacity: 32 + 10 + 1 + 16 + 6)
        out.append(author.bytes)
        out.varint(serial)
        if let spot {
            out.byte(1)
            out.append(spot.game)
            out.varint(spot.x)
            out.varint(spot.y)
        } else {
            out.byte(0)
        }
        return out.bytes
    }

    /// A note signed by `identity`.
    public init(signing identity: SigningIdentity, serial: UInt64, spot: PresenceSpot?) {
        author = identity.peerID
        self.serial = serial
        self.spot = spot
        signature = identity.sign(Self.signatureDomain + Self.signedBytes(author: identity.peerID, serial: serial, spot: spot))
    }

    /// Whether the signature is the author's.
    public var isAuthentic: Bool { author.isValidSignature(signature, of: Self.signatureDomain + signedBytes) }

    /// The encoding.
    public var encoded: [UInt8] { signedBytes + signature.bytes }

    /// Decodes a note (its signature is not checked here: ``isAuthentic``).
    public init(decoding bytes: some Collection<UInt8>) throws(ByteDecodingError) {
        var r = ByteReader(Array(bytes))
        let author = try r.peer("presence author")
        let serial = try r.varint("presence serial")
        let state = try r.byte("presence state")
        var spot: PresenceSpot?
        switch state {
        case 0:
            spot = nil
        case 1:
            let game = try r.take(PresenceSpot.gameIDByteCount, "presence game")
            let limit = PresenceSpot.coordinateLimit
            let x = try r.int("presence x", max: limit), y = try r.int("presence y", max: limit)
            spot = PresenceSpot(game: game, x: x, y: y)
        default:
            throw .unknownKind(field: "presence state", value: state)
        }
        let signature = try r.signatureAtEnd("presence signature")
        self.author = author
        self.serial = serial
        self.spot = spot
        self.signature = signature
    }
}

/// What a daemon knows of other players' presence: the newest note of each
/// author while it lives. Pure: the caller passes the time, in seconds on
/// any steady clock.
///
/// A note lives ``lifetime`` seconds after it was heard; its author sends
/// its presence again every ``heartbeat`` seconds while its viewer is open,
/// so a player whose daemon or link goes away disappears within
/// ``lifetime``. A note older than the one held (by serial) is ignored
/// while the held one lives, so a relayed copy that comes late changes
/// nothing; a note that says its author left is kept, as such, until it
/// expires, for the same reason.
public struct PresenceTable: Sendable {
    /// How long a note lives after it was heard, in seconds.
    public static let lifetime = 5.0
    /// How often an author sends its presence again while it stays, in seconds.
    public static let heartbeat = 2.0
    /// The shortest interval between two notes an author sends: a cursor's
    /// moves are coalesced to at most 20 a second.
    public static let minimumInterval = 0.05

    struct Entry: Sendable {
        var serial: UInt64
        var spot: PresenceSpot?
        var heard: Double
        /// The peer whose link brought it last.
        var via: PeerID?
    }

    private(set) var entries: [PeerID: Entry] = [:]

    /// An empty table.
    public init() {}

    /// What taking a note changed.
    public enum Change: Sendable, Equatable {
        /// Nothing: the note was stale (not newer than the one held).
        case none
        /// The author's spot is now this (nil: they left). Relay the note, and show it.
        case moved(PresenceSpot?)
        /// Only the note's life was renewed: relay it, nothing to show.
        case renewed
    }

    /// Takes an authentic note heard at `now`, on the link to `via`.
    public mutating func take(_ note: PresenceNote, now: Double, via: PeerID? = nil) -> Change {
        if let held = entries[note.author], now - held.heard < Self.lifetime {
            guard note.serial > held.serial else { return .none }
            entries[note.author] = Entry(serial: note.serial, spot: note.spot, heard: now, via: via)
            return held.spot == note.spot ? .renewed : .moved(note.spot)
        }
        let wasShown = entries[note.author]?.spot != nil
        entries[note.author] = Entry(serial: note.serial, spot: note.spot, heard: now, via: via)
        if note.spot == nil && !wasShown { return .renewed }
        return .moved(note.spot)
    }

    /// Removes the notes that expired by `now`; returns the authors who were
    /// shown somewhere and are now gone.
    public mutating func expire(now: Double) -> [PeerID] {
        var gone: [PeerID] = []
        for (author, entry) in entries where now - entry.heard >= Self.lifetime {
            entries[author] = nil
            if entry.spot != nil { gone.append(author) }
        }
        return gone.sorted()
    }

    /// Forgets at once every note last brought by the link to `peer`, now
    /// that no link to it is left (the peer shows offline: neither it nor
    /// the players it carried look anywhere any more); returns the authors
    /// who were shown somewhere. A note that comes again by another path
    /// shows them again.
    public mutating func linkLost(to peer: PeerID) -> [PeerID] {
        var gone: [PeerID] = []
        for (author, entry) in entries where entry.via == peer {
            entries[author] = nil
            if entry.spot != nil { gone.append(author) }
        }
        return gone.sorted()
    }

    /// Where each author is looking now, by author.
    public var spots: [PeerID: PresenceSpot] {
        var out: [PeerID: PresenceSpot] = [:]
        for (author, entry) in entries { if let spot = entry.spot { out[author] = spot } }
        return out
    }
}
