import SweeperConventions
import SweeperCrypto

/// A player pointing at a cell ("look here"): every player who has the
/// game open sees the cell flash in the pointer's colour for a few seconds.
/// Signed by the author, so a relay cannot forge or move it; ephemeral like
/// presence: relayed once, shown, never stored.
///
/// Encoding (the body of a ``PeerMessage/point(_:)``, peer protocol 13):
///
///     author key (32) ‖ serial (LEB128) ‖ game id (16) ‖ x (LEB128) ‖ y (LEB128)
///     ‖ signature (64): Ed25519 over "sweeper/point/v1\0" ‖ the bytes before it
///
/// The serial is the author's wall clock when they pointed (milliseconds
/// since 1970), made to grow: a receiver takes an author's note only when
/// its serial is greater than the last one it took, and only while it is
/// fresh by the receiver's own clock (``PointTable``).
public struct PointNote: Sendable, Hashable {
    static let signatureDomain = Array("sweeper/point/v1\0".utf8)

    /// Who pointed.
    public let author: PeerID
    /// The author's wall clock when they pointed (ms since 1970), made to grow.
    public let serial: UInt64
    /// The game and the cell pointed at.
    public let spot: PresenceSpot
    /// The author's signature.
    public let signature: Signature

    var signedBytes: [UInt8] { Self.signedBytes(author: author, serial: serial, spot: spot) }

    static func signedBytes(author: PeerID, serial: UInt64, spot: PresenceSpot) -> [UInt8] {
        var out = ByteWriter(capacity: 32 + 10 + 16 + 6)
        out.append(author.bytes)
        out.varint(serial)
        out.append(spot.game)
        out.varint(spot.x)
        out.varint(spot.y)
        return out.bytes
    }

    /// A note signed by `identity`.
    public init(signing identity: SigningIdentity, serial: UInt64, spot: PresenceSpot) {
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
        let author = try r.peer("point author")
        let serial = try r.varint("point serial")
        let game = try r.take(PresenceSpot.gameIDByteCount, "point game")
        let limit = PresenceSpot.coordinateLimit
        let x = try r.int("point x", max: limit), y = try r.int("point y", max: limit)
        guard let spot = PresenceSpot(game: game, x: x, y: y) else {
            throw .invalid(field: "point cell", reason: "is not on any board")
        }
        let signature = try r.signatureAtEnd("point signature")
        self.author = author
        self.serial = serial
        self.spot = spot
        self.signature = signature
    }
}

extension PointNote: SignedNote {}

/// Which points a daemon takes: each author's newest, while fresh, at a
/// bounded rate. Pure: the caller passes both clocks.
///
/// A note is taken only when its serial is greater than the author's last
/// taken one (a relayed copy, or a note replayed later, is dropped), when
/// the serial is within ``freshness`` of the receiver's wall clock (a note
/// kept and replayed after a restart shows nothing), and at most
/// ``burst`` notes of one author in any ``burstWindow`` seconds of the
/// receiver's steady clock (a member in bad faith cannot flood the other
/// screens with flashes).
public struct PointTable: Sendable {
    /// How far the serial may be from the receiver's wall clock, in ms.
    public static let freshness: UInt64 = 120_000
    /// How many notes of one author are taken in ``burstWindow``.
    public static let burst = 4
    /// The window of ``burst``, in seconds.
    public static let burstWindow = 2.0
    /// How long the viewers show a point, in seconds.
    public static let shownFor = 4.0

    private struct Entry {
        var serial: UInt64
        /// When the notes taken in the current window were heard (steady seconds).
        var heard: [Double]
    }

    private var entries: [PeerID: Entry] = [:]

    /// An empty table.
    public init() {}

    /// Takes an authentic note heard at `now` (steady seconds) when the
    /// receiver's wall clock reads `wallMillis`; returns whether to relay and show it.
    public mutating func take(_ note: PointNote, now: Double, wallMillis: UInt64) -> Bool {
        let skew = note.serial > wallMillis ? note.serial - wallMillis : wallMillis - note.serial
        guard skew <= Self.freshness else { return false }
        var entry = entries[note.author] ?? Entry(serial: 0, heard: [])
        guard note.serial > entry.serial else { return false }
        entry.heard.removeAll { now - $0 >= Self.burstWindow }
        guard entry.heard.count < Self.burst else { return false }
        entry.heard.append(now)
        entry.serial = note.serial
        entries[note.author] = entry
        return true
    }
}
