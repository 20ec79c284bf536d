import SweeperConventions
import SweeperCrypto

/// One stretch of time during which a player's daemon counted a game's
/// clock: when it began (the author's wall clock, milliseconds since 1970,
/// informative only) and how long it lasted (milliseconds, measured on the
/// author's steady clock, so a wall clock that jumps changes nothing).
public struct PlayPeriod: Sendable, Hashable {
    /// When it began, the author's wall clock (ms since 1970).
    public var start: UInt64
    /// How long it lasted (ms).
    public var length: UInt64

    /// A period.
    public init(start: UInt64, length: UInt64) {
        self.start = start
        self.length = length
    }
}

/// A player's share of one game's played time, as it travels between
/// daemons and is kept: the periods during which this player's daemon
/// counted the game's clock. Signed by the author, replicated to every
/// member (relays included) and kept; the newest (by serial) of each
/// (author, game) wins, so every daemon holding the same notes computes
/// the same time: the sum of every author's ``total``.
///
/// A daemon counts only the time no player with a smaller peer id was
/// counting the same game (as their presence says), so the authors' shares
/// do not overlap and their sum is the union of everyone's time; the
/// lengths come from each author's steady clock, so machines whose wall
/// clocks disagree still add up right.
///
/// Encoding (the body of a ``PeerMessage/play(_:)``):
///
///     author key (32) ‖ game id (16) ‖ serial (LEB128) ‖ earlier (LEB128, ms)
///     ‖ count (LEB128, ≤ 32) ‖ count × (start (LEB128, ms) ‖ length (LEB128, ms))
///     ‖ signature (64): Ed25519 over "sweeper/play/v1\0" ‖ the bytes before it
///
/// `earlier` is the total of periods folded away to keep the note short
/// (the oldest go first once there are more than ``periodLimit``).
public struct PlayNote: Sendable, Hashable {
    static let signatureDomain = Array("sweeper/play/v1\0".utf8)
    /// The most periods one note lists.
    public static let periodLimit = 32
    /// The longest period or total a note may state: about 35 years, in ms.
    public static let lengthLimit: UInt64 = 1 << 40

    /// Whose time this is.
    public let author: PeerID
    /// The game's id (16 bytes).
    public let game: [UInt8]
    /// Grows with every note of this author for this game.
    public let serial: UInt64
    /// The total of earlier periods no longer listed (ms).
    public let earlier: UInt64
    /// The periods, oldest first.
    public let periods: [PlayPeriod]
    /// The author's signature.
    public let signature: Signature

    /// The author's share of the game's time (ms).
    public var total: UInt64 { periods.reduce(earlier) { $0 + $1.length } }

    static func signedBytes(author: PeerID, game: [UInt8], serial: UInt64, earlier: UInt64, periods: [PlayPeriod]) -> [UInt8] {
        var out = ByteWriter(capacity: 32 + 16 + 20 + periods.count * 10)
        out.append(author.bytes)
        out.append(game)
        out.varint(serial)
        out.varint(earlier)
        out.varint(periods.count)
        for p in periods {
            out.varint(p.start)
            out.varint(p.length)
        }
        return out.bytes
    }

    /// A note signed by `identity`; periods beyond ``periodLimit`` are
    /// folded, oldest first, into `earlier`, and lengths are clamped to
    /// ``lengthLimit``. Nil when `game` is not 16 bytes.
    public init?(signing identity: SigningIdentity, game: [UInt8], serial: UInt64, earlier: UInt64, periods: [PlayPeriod]) {
        guard game.count == 16 else { return nil }
        var earlier = min(earlier, Self.lengthLimit)
        var periods = periods.map { PlayPeriod(start: $0.start, length: min($0.length, Self.lengthLimit)) }
        while periods.count > Self.periodLimit {
            earlier = min(earlier + periods.removeFirst().length, Self.lengthLimit)
        }
        author = identity.peerID
        self.game = game
        self.serial = serial
        self.earlier = earlier
        self.periods = periods
        signature = identity.sign(
            Self.signatureDomain + Self.signedBytes(author: author, game: game, serial: serial, earlier: earlier, periods: periods))
    }

    /// Whether the signature is the author's.
    public var isAuthentic: Bool {
        author.isValidSignature(
            signature, of: Self.signatureDomain + Self.signedBytes(author: author, game: game, serial: serial, earlier: earlier, periods: periods))
    }

    /// The encoding.
    public var encoded: [UInt8] {
        Self.signedBytes(author: author, game: game, serial: serial, earlier: earlier, periods: periods) + signature.bytes
    }

    /// Decodes a note (its signature is not checked here: ``isAuthentic``).
    /// More than ``periodLimit`` periods, or a length over ``lengthLimit``, is refused.
    public init(decoding bytes: some Collection<UInt8>) throws(ByteDecodingError) {
        var r = ByteReader(Array(bytes))
        let author = try r.peer("play time author")
        let game = try r.take(16, "play time game")
        let serial = try r.varint("play time serial")
        let earlier = try r.varint("play time earlier", max: Self.lengthLimit)
        let count = try r.int("play time periods", max: Self.periodLimit)
        var periods: [PlayPeriod] = []
        periods.reserveCapacity(count)
        for _ in 0..<count {
            let start = try r.varint("play time period start")
            periods.append(PlayPeriod(start: start, length: try r.varint("play time period length", max: Self.lengthLimit)))
        }
        let signature = try r.signatureAtEnd("play time signature")
        self.author = author
        self.game = game
        self.serial = serial
        self.earlier = earlier
        self.periods = periods
        self.signature = signature
    }
}
