import SweeperConventions
import SweeperCrypto

/// A chain segment in the compact form a link carries between peers of
/// protocol 15 (sync message ``SyncMessage/chains(_:)``): the same signed
/// run of one author's ops as an ``OpSegment``, without what the receiver
/// knows from the link. The game is named by a ``LinkGameRef``; the author
/// is the link's peer, a key of the sender's first summary on the link by
/// its place, or given whole; the membership proof is the circle's proof
/// for the author, which the receiver works out; and the hash of the op
/// before the first is left out when the sender knows the receiver holds
/// that op.
///
/// A chains message reads the link's state and never changes it: a game
/// given by id takes no number here. So a sender may drop one while its
/// send buffer is full, as it may drop a catch-up of ``OpSegment``s.
///
/// Encoding: game reference with one flag bit (LEB128: reference × 2 ‖ 1
/// when the previous hash follows; a reference of 0 is followed by the
/// game id, 16 bytes) ‖ author (LEB128: 0 the sender, 1 a key follows
/// (32), i + 2 place i among the author keys of the sender's first
/// summary, ascending and each once) ‖ first seq (LEB128) ‖ with the flag:
/// the hash of the op before the first (32) ‖ the ops as in an
/// ``OpSegment`` ‖ the last op's signature (64). Without the flag, the op
/// before the first is none when the first seq is 1, else the one the
/// receiver holds; the flag with a first seq of 1 is malformed.
public struct LinkSegment: Hashable, Sendable {
    /// Who made a segment's ops, as a link names them.
    public enum Author: Hashable, Sendable {
        /// The sender: the link's peer, as its handshake proved.
        case sender
        /// A key given whole.
        case key(PeerID)
        /// Place `i` among the author keys of the sender's first summary on
        /// the link (ascending, each once; the first ``LinkSegment/authorLimit``).
        case summarized(Int)
    }

    /// The most author keys of a summary that a link names by place.
    public static let authorLimit = 4_096

    /// The game.
    public var game: LinkGameRef
    /// The author.
    public var author: Author
    /// The seq of the first op.
    public var firstSeq: UInt64
    /// The hash of the op before the first, when given; `nil`: none when
    /// ``firstSeq`` is 1, else the one the receiver holds.
    public var previous: OpHash?
    /// The ops, each what the receiver cannot recompute.
    var steps: [SegmentSteps.Step]
    /// The last op's signature.
    public var signature: Signature

    /// The number of ops.
    public var count: Int { steps.count }

    /// The compact form of `segment`, its game and author as named on the
    /// link and its previous hash given only when `previousKnown` is false
    /// (and its first seq is not 1); `nil` when its last op is unsigned.
    init?(_ segment: OpSegment, game: LinkGameRef, author: Author, previousKnown: Bool) {
        guard let first = segment.ops.first, let signature = segment.ops.last?.signature else { return nil }
        self.game = game
        self.author = author
        firstSeq = first.seq
        previous = previousKnown || first.seq == 1 ? nil : first.previous
        steps = segment.ops.map { SegmentSteps.Step(lamport: $0.lamport, wall: $0.wallClockMillis, payload: $0.payload) }
        self.signature = signature
    }

    func encode(into w: inout ByteWriter) {
        game.encode(into: &w, flags: previous == nil ? 0 : 1, flagBits: 1)
        switch author {
        case .sender:
            w.varint(0)
        case .key(let key):
            w.varint(1)
            w.append(key.bytes)
        case .summarized(let i):
            w.varint(UInt64(i) + 2)
        }
        w.varint(firstSeq)
        if let previous { w.append(previous.bytes) }
        SegmentSteps.encode(steps.lazy.map { ($0.lamport, $0.wall, $0.payload) }, count: steps.count, into: &w)
        w.append(signature.bytes)
    }

    static func decode(from r: inout ByteReader) throws(ByteDecodingError) -> LinkSegment {
        let (game, flags) = try LinkGameRef.decode(from: &r, flagBits: 1)
        let code = try r.varint("author")
        let author: Author
        switch code {
        case 0: author = .sender
        case 1: author = .key(try PeerID.fromDecoded(try r.take(PeerID.byteCount, "author key")))
        default:
            guard code - 2 < UInt64(authorLimit) else { throw .valueOutOfRange(field: "author", value: code) }
            author = .summarized(Int(code - 2))
        }
        let firstSeq = try SegmentSteps.firstSeq(from: &r)
        var previous: OpHash?
        if flags & 1 != 0 {
            guard firstSeq > 1 else { throw .valueOutOfRange(field: "first seq with a previous hash", value: firstSeq) }
            previous = OpHash(unchecked: try r.take(OpHash.byteCount, "previous hash"))
        }
        let steps = try SegmentSteps.decode(from: &r)
        guard let signature = Signature(bytes: try r.take(Signature.byteCount, "signature")) else { throw .truncated(field: "signature") }
        return LinkSegment(game: game, author: author, firstSeq: firstSeq, previous: previous, steps: steps, signature: signature)
    }

    private init(game: LinkGameRef, author: Author, firstSeq: UInt64, previous: OpHash?, steps: [SegmentSteps.Step], signature: Signature) {
        self.game = game
        self.author = author
        self.firstSeq = firstSeq
        self.previous = previous
        self.steps = steps
        self.signature = signature
    }

    /// The ops, rebuilt with what the receiver knows: the game and author
    /// the link's references name, the circle's membership proof for the
    /// author and the hash of the op before the first (``previous`` when
    /// given, else as the receiver holds it). Nothing is verified here.
    func ops(game id: GameID, author key: PeerID, proof: [UInt8], previous before: OpHash) -> OpSegment {
        OpSegment(
            rebuilding: steps, game: id, author: key, proof: proof, firstSeq: firstSeq,
            previous: before, signature: signature)
    }
}
