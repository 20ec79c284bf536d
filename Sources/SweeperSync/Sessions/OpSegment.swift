import SweeperConventions
import SweeperCrypto

/// A run of one author's consecutive ops in one game, carried with the
/// signature of its last op only. Each op names the hash of the one before,
/// and the last op's signature covers its own canonical bytes, so checking
/// the chain of hashes and that one signature authenticates every op: this
/// is how a peer catches up on thousands of ops with one signature check.
///
/// Wire encoding (fields the receiver can recompute are left out):
///
///     game id (16) ‖ author (32) ‖ membership proof (16) ‖ first seq (LEB128)
///     ‖ hash of the op before the first (32; zeros when first seq = 1)
///     ‖ op count (LEB128) ‖ per op: Lamport (first absolute, then the
///       increase − 1) ‖ wall clock (first absolute, then a zigzag delta)
///       ‖ kind ‖ payload
///     ‖ signature of the last op (64)
public struct OpSegment: Sendable, Hashable {
    /// The most ops one segment may carry.
    public static let opLimit = 1 << 20

    /// The ops, consecutive seqs of one author in one game; only the last
    /// is sure to carry a signature.
    public let ops: [Op]

    /// Wraps consecutive ops of one author in one game whose last op is
    /// signed; `nil` otherwise. Nothing is verified here.
    public init?(verifiedOps ops: [Op]) {
        guard let first = ops.first, let last = ops.last, last.signature != nil, ops.count <= Self.opLimit else { return nil }
        for (i, op) in ops.enumerated() {
            guard op.author == first.author, op.gameID == first.gameID, op.seq == first.seq + UInt64(i),
                op.membershipProof == first.membershipProof
            else { return nil }
        }
        self.ops = ops
    }

    private init(decodedOps ops: [Op]) { self.ops = ops }

    /// Whether each op names the hash of the one before.
    var isChained: Bool {
        var i = 1
        while i < ops.count {
            if ops[i].previous != ops[i - 1].hash || ops[i].lamport <= ops[i - 1].lamport { return false }
            i += 1
        }
        return true
    }

    func encode(into w: inout ByteWriter) {
        guard let first = ops.first, let last = ops.last, let signature = last.signature else { return }
        w.append(first.gameID.bytes)
        w.append(first.author.bytes)
        w.append(first.membershipProof)
        w.varint(first.seq)
        w.append(first.previous.bytes)
        SegmentSteps.encode(ops.lazy.map { ($0.lamport, $0.wallClockMillis, $0.payload) }, count: ops.count, into: &w)
        w.append(signature.bytes)
    }

    /// The wire encoding on its own.
    public var encoded: [UInt8] {
        var w = ByteWriter(capacity: 128 + ops.count * 8)
        encode(into: &w)
        return w.bytes
    }

    /// Decodes a segment on its own (see ``encoded``).
    public init(decoding bytes: [UInt8]) throws(ByteDecodingError) {
        var r = ByteReader(bytes)
        self = try Self.decode(from: &r)
        try r.expectEnd()
    }

    static func decode(from r: inout ByteReader) throws(ByteDecodingError) -> OpSegment {
        let game = GameID(unchecked: try r.take(GameID.byteCount, "game id"))
        let author = try PeerID.fromDecoded(try r.take(PeerID.byteCount, "author key"))
        let proof = try r.take(CircleKey.proofByteCount, "membership proof")
        let firstSeq = try SegmentSteps.firstSeq(from: &r)
        let previous = OpHash(unchecked: try r.take(OpHash.byteCount, "previous hash"))
        let steps = try SegmentSteps.decode(from: &r)
        let signature = Signature(bytes: try r.take(Signature.byteCount, "signature"))
        return OpSegment(
            rebuilding: steps, game: game, author: author, proof: proof, firstSeq: firstSeq,
            previous: previous, signature: signature)
    }

    /// Rebuilds the ops of a segment from what the wire carried and what the
    /// receiver knows: each op's canonical bytes, chained by hashes from
    /// `previous`, the last carrying `signature`. Nothing is verified here.
    init(
        rebuilding steps: [SegmentSteps.Step], game: GameID, author: PeerID, proof: [UInt8], firstSeq: UInt64,
        previous: OpHash, signature: Signature?
    ) {
        var ops: [Op] = []
        ops.reserveCapacity(steps.count)
        var previous = previous
        for (i, step) in steps.enumerated() {
            let op = Op(
                gameID: game, author: author, seq: firstSeq + UInt64(i), lamport: step.lamport, previous: previous,
                wallClockMillis: step.wall, membershipProof: proof, payload: step.payload,
                signature: i == steps.count - 1 ? signature : nil)
            previous = op.hash
            ops.append(op)
        }
        self.init(decodedOps: ops)
    }
}

/// The ops of a segment as the wire carries them, in both segment forms
/// (``OpSegment`` and ``LinkSegment``): op count (LEB128, 1 to
/// ``OpSegment/opLimit``) ‖ per op: Lamport time (the first absolute,
/// then the increase − 1) ‖ wall clock (the first absolute, then a zigzag
/// change) ‖ kind ‖ payload.
enum SegmentSteps {
    /// One op of a segment: what the receiver cannot recompute.
    struct Step: Hashable, Sendable {
        var lamport: UInt64
        var wall: UInt64
        var payload: OpPayload
    }

    /// Writes `count` ops as steps.
    static func encode(_ ops: some Sequence<(UInt64, UInt64, OpPayload)>, count: Int, into w: inout ByteWriter) {
        w.varint(count)
        var previous: (lamport: UInt64, wall: UInt64)?
        for (lamport, wall, payload) in ops {
            if let p = previous {
                w.varint(lamport &- p.lamport &- 1)
                w.signedVarint(Int64(bitPattern: wall &- p.wall))
            } else {
                w.varint(lamport)
                w.varint(wall)
            }
            payload.encode(into: &w)
            previous = (lamport, wall)
        }
    }

    /// Reads a segment's first seq (at least 1).
    static func firstSeq(from r: inout ByteReader) throws(ByteDecodingError) -> UInt64 {
        let firstSeq = try r.varint("first seq")
        guard firstSeq >= 1, firstSeq < UInt64.max / 2 else { throw .valueOutOfRange(field: "first seq", value: firstSeq) }
        return firstSeq
    }

    /// Reads the op count and the ops, Lamport times rising.
    static func decode(from r: inout ByteReader) throws(ByteDecodingError) -> [Step] {
        let count = try r.int("op count", max: OpSegment.opLimit)
        guard count >= 1 else { throw .valueOutOfRange(field: "op count", value: 0) }
        // Each op takes at least 3 bytes, so a count the input cannot hold is refused before allocating.
        guard count <= r.remaining / 3 else { throw .truncated(field: "segment ops") }
        var steps: [Step] = []
        steps.reserveCapacity(count)
        var lamport: UInt64 = 0
        var wall: UInt64 = 0
        for i in 0..<count {
            if i == 0 {
                lamport = try r.varint("Lamport time")
                guard lamport >= 1 else { throw .valueOutOfRange(field: "Lamport time", value: 0) }
                wall = try r.varint("wall clock")
            } else {
                let step = try r.varint("Lamport step")
                guard step < UInt64.max - lamport else { throw .valueOutOfRange(field: "Lamport step", value: step) }
                lamport += step + 1
                wall = wall &+ UInt64(bitPattern: try r.signedVarint("wall clock delta"))
            }
            steps.append(Step(lamport: lamport, wall: wall, payload: try OpPayload.decode(from: &r)))
        }
        return steps
    }
}
