import SweeperConventions
import SweeperCrypto

/// A game as a live push or a head signature names it: by its id, which
/// numbers it in the sender's direction of the link (from 1); by that
/// number; by the number the receiver gave it in its own direction; or by
/// its place in the receiver's first summary on the link. So a game is
/// named by its 16-byte id at most once per direction, and not at all when
/// the receiver named it first or listed it.
public enum LinkGameRef: Hashable, Sendable {
    /// A game by its id: it takes the next number of the sender's direction.
    case new(GameID)
    /// A game by the number it took in the sender's direction.
    case numbered(Int)
    /// A game by the number it took in the receiver's direction (the
    /// receiver named it by id in its own live pushes or heads).
    case receiverNumbered(Int)
    /// A game of the first summary the receiver sent on this link, by its
    /// place there (from 0, in ascending id order).
    case summarized(Int)

    /// The most games one direction of a link numbers, and the most of a
    /// summary it names by place; later games go as segments.
    public static let limit = 1 << 16

    /// The reference as a number: 0 for a game by id, then in turn
    /// 3n − 2 for number n, 3n − 1 for the receiver's number n, and 3i + 3
    /// for place i of the summary.
    private var code: UInt64 {
        switch self {
        case .new: 0
        case .numbered(let n): UInt64(n) * 3 - 2
        case .receiverNumbered(let n): UInt64(n) * 3 - 1
        case .summarized(let i): UInt64(i) * 3 + 3
        }
    }

    func encode(into w: inout ByteWriter, flags: UInt64, flagBits: UInt64) {
        w.varint(code << flagBits | flags)
        if case .new(let id) = self { w.append(id.bytes) }
    }

    /// Reads a reference and the flags packed below it.
    static func decode(from r: inout ByteReader, flagBits: UInt64) throws(ByteDecodingError) -> (LinkGameRef, UInt64) {
        let head = try r.varint("game reference")
        let flags = head & ((1 << flagBits) - 1)
        let code = head >> flagBits
        if code == 0 { return (.new(GameID(unchecked: try r.take(GameID.byteCount, "game id"))), flags) }
        guard code <= UInt64(limit) * 3 else { throw .valueOutOfRange(field: "game reference", value: code) }
        let n = Int((code + 2) / 3)
        switch code % 3 {
        case 1: return (.numbered(n), flags)
        case 2: return (.receiverNumbered(n), flags)
        default: return (.summarized(n - 1), flags)
        }
    }
}

/// One op of the sender's own chain as a live push carries it: on a link
/// whose peer authenticated as the author in the handshake, everything the
/// receiver knows or can recompute is left out (the author key, the hash of
/// the op before, the membership proof, which is the circle's proof for
/// the link's peer, the game id once the receiver's summary or the link
/// named the game, the sequence number and times as steps from the chain's
/// previous op on the link), and the signature comes only now and then
/// (see ``SyncMessage/live(_:)``). The receiver rebuilds the complete
/// canonical op, so that a signature of a later op vouches for it like any
/// other.
///
/// Encoding: game reference with two flag bits below it (LEB128: reference
/// × 4 ‖ flags; see ``LinkGameRef``; a new game is followed by its id, 16
/// bytes) ‖ with flag bit 0 seq, Lamport time and wall clock (LEB128 each),
/// else the Lamport step (increase − 1, LEB128) and the wall clock change
/// (zigzag LEB128) from the chain's previous op on the link (its seq is
/// that op's plus one) ‖ kind ‖ payload ‖ with flag bit 1 the op's
/// signature (64).
public struct LiveOp: Hashable, Sendable {
    /// Where the op sits: given whole, or as steps from the chain's previous op on the link.
    public enum Position: Hashable, Sendable {
        /// Sequence number, Lamport time and wall clock.
        case absolute(seq: UInt64, lamport: UInt64, wall: UInt64)
        /// One after the chain's previous op on the link: the Lamport time
        /// grows by `lamportStep` + 1, the wall clock by `wallChange`.
        case next(lamportStep: UInt64, wallChange: Int64)
    }

    /// The game.
    public var game: LinkGameRef
    /// Where the op sits in its author's chain.
    public var position: Position
    /// What it does.
    public var payload: OpPayload
    /// The op's signature, when the author signs its chain head here.
    public var signature: Signature?

    /// Creates a live op.
    public init(game: LinkGameRef, position: Position, payload: OpPayload, signature: Signature?) {
        self.game = game
        self.position = position
        self.payload = payload
        self.signature = signature
    }

    func encode(into w: inout ByteWriter) {
        var flags: UInt64 = 0
        if case .absolute = position { flags |= 1 }
        if signature != nil { flags |= 2 }
        game.encode(into: &w, flags: flags, flagBits: 2)
        switch position {
        case .absolute(let seq, let lamport, let wall):
            w.varint(seq)
            w.varint(lamport)
            w.varint(wall)
        case .next(let step, let change):
            w.varint(step)
            w.signedVarint(change)
        }
        payload.encode(into: &w)
        if let signature { w.append(signature.bytes) }
    }

    static func decode(from r: inout ByteReader) throws(ByteDecodingError) -> LiveOp {
        let (game, flags) = try LinkGameRef.decode(from: &r, flagBits: 2)
        let position: Position
        if flags & 1 != 0 {
            let seq = try r.varint("seq")
            guard seq >= 1, seq < UInt64.max / 2 else { throw .valueOutOfRange(field: "seq", value: seq) }
            let lamport = try r.varint("Lamport time")
            guard lamport >= 1 else { throw .valueOutOfRange(field: "Lamport time", value: lamport) }
            position = .absolute(seq: seq, lamport: lamport, wall: try r.varint("wall clock"))
        } else {
            position = .next(lamportStep: try r.varint("Lamport step"), wallChange: try r.signedVarint("wall clock change"))
        }
        let payload = try OpPayload.decode(from: &r)
        let signature = flags & 2 != 0 ? Signature(bytes: try r.take(Signature.byteCount, "signature")) : nil
        return LiveOp(game: game, position: position, payload: payload, signature: signature)
    }
}

/// A signature of one op, sent apart from it: it vouches for the op and
/// every op before it in its author's chain (each names the hash of the one
/// before), which the receiver holds already.
///
/// Encoding: game reference (LEB128 reference × 2 ‖ 1 when an author key
/// follows; see ``LinkGameRef``) ‖ the author key (32)
/// when flagged, else the author is the sender ‖ seq (LEB128) ‖ signature (64).
public struct HeadSignature: Hashable, Sendable {
    /// The game.
    public var game: LinkGameRef
    /// The chain's author; `nil` for the sender's own chain.
    public var author: PeerID?
    /// The sequence number of the op signed.
    public var seq: UInt64
    /// The author's signature of that op (``Op`` signature domain and canonical bytes).
    public var signature: Signature

    /// Creates a head signature.
    public init(game: LinkGameRef, author: PeerID?, seq: UInt64, signature: Signature) {
        self.game = game
        self.author = author
        self.seq = seq
        self.signature = signature
    }

    func encode(into w: inout ByteWriter) {
        game.encode(into: &w, flags: author == nil ? 0 : 1, flagBits: 1)
        if let author { w.append(author.bytes) }
        w.varint(seq)
        w.append(signature.bytes)
    }

    static func decode(from r: inout ByteReader) throws(ByteDecodingError) -> HeadSignature {
        let (game, flags) = try LinkGameRef.decode(from: &r, flagBits: 1)
        let author = flags & 1 != 0 ? try PeerID.fromDecoded(try r.take(PeerID.byteCount, "author key")) : nil
        let seq = try r.varint("seq")
        guard seq >= 1 else { throw .valueOutOfRange(field: "seq", value: seq) }
        guard let signature = Signature(bytes: try r.take(Signature.byteCount, "signature")) else { throw .truncated(field: "signature") }
        return HeadSignature(game: game, author: author, seq: seq, signature: signature)
    }
}

/// One author's chain in one game, up to an op: what a peer asks to have
/// signed (``SyncMessage/unsigned(_:)``).
public struct ChainHead: Hashable, Sendable {
    /// The game.
    public var game: GameID
    /// The chain's author.
    public var author: PeerID
    /// The newest op held.
    public var seq: UInt64

    /// Creates a chain head.
    public init(game: GameID, author: PeerID, seq: UInt64) {
        self.game = game
        self.author = author
        self.seq = seq
    }
}

/// What one direction of a link has said of live pushes: the receiver's
/// first summary (its games, and the author keys it names, by which the
/// receiver's own chains messages name authors), the games it numbered,
/// and per game the newest op of the sender's chain it carried. The
/// sender and the receiver each keep one for the sender's direction, in
/// step; a session holds one for each direction, and resolves a reference
/// to the receiver's numbers (``LinkGameRef/receiverNumbered(_:)``) with
/// the other.
struct LiveLinkState: Sendable {
    /// The games of the receiver's first summary on the link, ascending (at
    /// most ``LinkGameRef/limit``); `nil` until the receiver sent it (on
    /// the receiver's side) or the sender received it (on the sender's).
    private(set) var summarized: [GameID]?
    /// Places in `summarized`.
    private var places: [GameID: Int] = [:]
    /// The author keys of the receiver's first summary, ascending, each
    /// once (at most ``LinkSegment/authorLimit``); `nil` until then.
    private(set) var summaryAuthors: [PeerID]?
    /// Places in `summaryAuthors`.
    private var authorPlaces: [PeerID: Int] = [:]
    /// Game numbers, from 1.
    private(set) var numbers: [GameID: Int] = [:]
    /// Games by number − 1.
    private(set) var games: [GameID] = []
    /// Per game, the newest op of the sender's chain carried: seq, Lamport time and wall clock.
    var newest: [GameID: (seq: UInt64, lamport: UInt64, wall: UInt64)] = [:]

    /// Notes the games and authors of a summary the receiver sent, when it
    /// is its first on the link.
    mutating func note(summary games: [GameID: VersionVector]) {
        guard summarized == nil else { return }
        let first = Array(games.keys.sorted().prefix(LinkGameRef.limit))
        summarized = first
        for (i, id) in first.enumerated() { places[id] = i }
        var keys = Set<PeerID>()
        for vector in games.values { keys.formUnion(vector.heads.keys) }
        let authors = Array(keys.sorted().prefix(LinkSegment.authorLimit))
        summaryAuthors = authors
        for (i, key) in authors.enumerated() { authorPlaces[key] = i }
    }

    /// The place of `author` among the keys of the receiver's first summary.
    func place(of author: PeerID) -> Int? { authorPlaces[author] }

    /// The reference that names `game` in this direction without numbering
    /// it: by a number or place it has, else by its id (as a chains
    /// message names games; see ``LinkSegment``).
    func existingReference(to game: GameID, reverse: LiveLinkState) -> LinkGameRef {
        if let n = numbers[game] { return .numbered(n) }
        if let i = places[game] { return .summarized(i) }
        if let n = reverse.numbers[game] { return .receiverNumbered(n) }
        return .new(game)
    }

    /// The reference that names `game` in this direction, given the
    /// other direction's state (`reverse`), numbering it when new; `nil`
    /// once the direction numbered as many games as it may.
    mutating func reference(to game: GameID, reverse: LiveLinkState) -> LinkGameRef? {
        if let n = numbers[game] { return .numbered(n) }
        if let i = places[game] { return .summarized(i) }
        if let n = reverse.numbers[game] { return .receiverNumbered(n) }
        guard games.count < LinkGameRef.limit else { return nil }
        games.append(game)
        numbers[game] = games.count
        return .new(game)
    }

    /// The game a reference in this direction names, numbering a game
    /// given by id; `nil` for a number or place never given, or a game
    /// past the limit. `reverse` is the other direction's state.
    mutating func resolve(_ ref: LinkGameRef, reverse: LiveLinkState) -> GameID? {
        guard case .new(let id) = ref else { return game(ref, reverse: reverse) }
        guard games.count < LinkGameRef.limit else { return nil }
        if numbers[id] == nil { numbers[id] = games.count + 1 }
        games.append(id)
        return id
    }

    /// The game a reference in this direction names, without numbering a game given by id.
    func game(_ ref: LinkGameRef, reverse: LiveLinkState) -> GameID? {
        switch ref {
        case .new(let id):
            return id
        case .numbered(let n):
            return n >= 1 && n <= games.count ? games[n - 1] : nil
        case .receiverNumbered(let n):
            return n >= 1 && n <= reverse.games.count ? reverse.games[n - 1] : nil
        case .summarized(let i):
            guard let summarized, i < summarized.count else { return nil }
            return summarized[i]
        }
    }
}
