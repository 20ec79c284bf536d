import SweeperCrypto

/// A game as a live push or a head signature names it: new on the link
/// (its id, which takes the link's next number, from 1), or by the number
/// it took. Each direction of a link numbers its own games.
public enum LinkGameRef: Hashable, Sendable {
    /// A game not numbered on this link yet: it takes the next number.
    case new(GameID)
    /// A game by the number it took on this link.
    case numbered(Int)

    /// The most games one direction of a link numbers; later games go as segments.
    public static let limit = 1 << 16

    func encode(into w: inout ByteWriter, flags: UInt64, flagBits: UInt64) {
        switch self {
        case .new(let id):
            w.varint(flags)
            w.append(id.bytes)
        case .numbered(let n):
            w.varint(UInt64(n) << flagBits | flags)
        }
    }

    /// Reads a reference and the flags packed below it.
    static func decode(from r: inout ByteReader, flagBits: UInt64) throws(SyncDecodingError) -> (LinkGameRef, UInt64) {
        let head = try r.varint("game reference")
        let flags = head & ((1 << flagBits) - 1)
        let number = head >> flagBits
        if number == 0 { return (.new(GameID(unchecked: try r.take(GameID.byteCount, "game id"))), flags) }
        guard number <= UInt64(limit) else { throw .valueOutOfRange(field: "game number", value: number) }
        return (.numbered(Int(number)), flags)
    }
}

/// One op of the sender's own chain as a live push carries it: on a link
/// whose peer authenticated as the author in the handshake, everything the
/// receiver knows or can recompute is left out (the author key, the hash of
/// the op before, the membership proof once said, the sequence number and
/// times as steps from the chain's previous op on the link), and the
/// signature comes only now and then (see ``SyncMessage/live(_:)``). The
/// receiver rebuilds the complete canonical op, so that a signature of a
/// later op vouches for it like any other.
///
/// Encoding: game reference with three flag bits below it (LEB128: number
/// × 8 ‖ flags; number 0 is followed by the game id, 16 bytes) ‖ with flag
/// bit 0 the membership proof (16) ‖ with flag bit 1 seq, Lamport time and
/// wall clock (LEB128 each), else the Lamport step (increase − 1, LEB128)
/// and the wall clock change (zigzag LEB128) from the chain's previous op
/// on the link (its seq is that op's plus one) ‖ kind ‖ payload ‖ with flag
/// bit 2 the op's signature (64).
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
    /// The membership proof, when it is new on the link.
    public var proof: [UInt8]?
    /// Where the op sits in its author's chain.
    public var position: Position
    /// What it does.
    public var payload: OpPayload
    /// The op's signature, when the author signs its chain head here.
    public var signature: Signature?

    /// Creates a live op.
    public init(game: LinkGameRef, proof: [UInt8]?, position: Position, payload: OpPayload, signature: Signature?) {
        self.game = game
        self.proof = proof
        self.position = position
        self.payload = payload
        self.signature = signature
    }

    func encode(into w: inout ByteWriter) {
        var flags: UInt64 = 0
        if proof != nil { flags |= 1 }
        if case .absolute = position { flags |= 2 }
        if signature != nil { flags |= 4 }
        game.encode(into: &w, flags: flags, flagBits: 3)
        if let proof { w.append(proof) }
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

    static func decode(from r: inout ByteReader) throws(SyncDecodingError) -> LiveOp {
        let (game, flags) = try LinkGameRef.decode(from: &r, flagBits: 3)
        let proof = flags & 1 != 0 ? try r.take(CircleKey.proofByteCount, "membership proof") : nil
        let position: Position
        if flags & 2 != 0 {
            let seq = try r.varint("seq")
            guard seq >= 1, seq < UInt64.max / 2 else { throw .valueOutOfRange(field: "seq", value: seq) }
            let lamport = try r.varint("Lamport time")
            guard lamport >= 1 else { throw .valueOutOfRange(field: "Lamport time", value: lamport) }
            position = .absolute(seq: seq, lamport: lamport, wall: try r.varint("wall clock"))
        } else {
            position = .next(lamportStep: try r.varint("Lamport step"), wallChange: try r.signedVarint("wall clock change"))
        }
        let payload = try OpPayload.decode(from: &r)
        let signature = flags & 4 != 0 ? Signature(bytes: try r.take(Signature.byteCount, "signature")) : nil
        return LiveOp(game: game, proof: proof, position: position, payload: payload, signature: signature)
    }
}

/// A signature of one op, sent apart from it: it vouches for the op and
/// every op before it in its author's chain (each names the hash of the one
/// before), which the receiver holds already.
///
/// Encoding: game reference (LEB128 number × 2 ‖ 1 when an author key
/// follows; number 0 is followed by the game id) ‖ the author key (32)
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

    static func decode(from r: inout ByteReader) throws(SyncDecodingError) -> HeadSignature {
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

/// What one direction of a link has said of live pushes: the games it
/// numbered, the membership proof it gave, and per game the newest op of
/// the sender's chain it carried. The sender and the receiver each keep one
/// for the sender's direction, in step.
struct LiveLinkState: Sendable {
    /// Game numbers, from 1.
    private(set) var numbers: [GameID: Int] = [:]
    /// Games by number − 1.
    private(set) var games: [GameID] = []
    /// The membership proof given last.
    var proof: [UInt8]?
    /// Per game, the newest op of the sender's chain carried: seq, Lamport time and wall clock.
    var newest: [GameID: (seq: UInt64, lamport: UInt64, wall: UInt64)] = [:]

    /// The reference that names `game`, numbering it when new (`nil` once
    /// the link numbered as many games as it may).
    mutating func reference(to game: GameID) -> LinkGameRef? {
        if let n = numbers[game] { return .numbered(n) }
        guard games.count < LinkGameRef.limit else { return nil }
        games.append(game)
        numbers[game] = games.count
        return .new(game)
    }

    /// The game that took number `n`, if one did.
    func game(numbered n: Int) -> GameID? { n >= 1 && n <= games.count ? games[n - 1] : nil }

    /// The number `game` took (0 when none).
    func number(of game: GameID) -> Int { numbers[game] ?? 0 }

    /// The game a reference names, numbering a new one; `nil` for a number
    /// never given or past the limit.
    mutating func resolve(_ ref: LinkGameRef) -> GameID? {
        switch ref {
        case .new(let id):
            guard games.count < LinkGameRef.limit else { return nil }
            if numbers[id] == nil { numbers[id] = games.count + 1 }
            games.append(id)
            return id
        case .numbered(let n):
            return game(numbered: n)
        }
    }
}
