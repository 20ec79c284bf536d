import SweeperCrypto
import SweeperGame

/// What a game's replica holds, read without changing it: its chains,
/// ops, hashes, the heads no signature covers, and segments for a peer.
extension GameReplica {
    /// The genesis, once known.
    public var genesis: Genesis? { state?.genesis }

    /// Author → highest contiguous seq accepted.
    public var vector: VersionVector {
        VersionVector(heads: chains.mapValues { UInt64($0.count) })
    }

    /// Every accepted op, the genesis first, then per author in seq order
    /// (read back from the archive where they left memory).
    public func allOps() throws -> [Op] {
        var out: [Op] = []
        guard let creator else { return out }
        for author in [creator] + authors.filter({ $0 != creator }) { out += try ops(of: author, after: 0) }
        return out
    }

    /// Every author with an accepted op, in order.
    public var authors: [PeerID] { chains.keys.sorted() }

    /// How many of `author`'s ops are accepted (its chain's newest seq).
    public func chainLength(of author: PeerID) -> UInt64 { UInt64(chains[author]?.count ?? 0) }

    /// `author`'s newest accepted op.
    public func lastOp(of author: PeerID) -> Op? { chains[author]?.last }

    /// `author`'s accepted ops after `seq`, in order.
    public func ops(of author: PeerID, after seq: UInt64) throws -> [Op] {
        let count = chainLength(of: author)
        guard seq < count, let chain = chains[author] else { return [] }
        return try chain.ops((seq + 1)...count, game: gameID, author: author, archive: archive)
    }

    /// The number of accepted ops.
    public var opCount: Int { chains.values.reduce(0) { $0 + $1.count } }

    /// How many accepted ops are held in memory (the others are in the archive).
    public var opsInMemory: Int { chains.values.reduce(0) { $0 + $1.held.count } }

    /// The accepted op of `author` with sequence number `seq`, if held (an
    /// archived one read back; `nil` also when that read fails).
    public func op(author: PeerID, seq: UInt64) -> Op? {
        guard let chain = chains[author] else { return nil }
        if let held = chain.heldOp(seq: seq) { return held }
        guard chain.isArchived(seq: seq) else { return nil }
        return try? chain.ops(seq...seq, game: gameID, author: author, archive: archive).first
    }

    /// The hash of `author`'s accepted op `seq`, if held (read back from
    /// the archive when it left memory, which a chain's newest op never does).
    public func hash(author: PeerID, seq: UInt64) -> OpHash? {
        chains[author]?.heldOp(seq: seq)?.hash ?? op(author: author, seq: seq)?.hash
    }

    /// Whether an op (by author and seq) is already accepted: `true` when the
    /// same op is held, `false` when a different one is, `nil` when neither.
    func holds(_ op: Op) -> Bool? {
        guard let chain = chains[op.author], op.seq >= 1, op.seq <= UInt64(chain.count) else { return nil }
        switch chain.match(seq: op.seq, hash: op.hash) {
        case .same: return true
        case .different: return false
        case .samePrefix:
            // Read back and compared whole. When it cannot be read, the op
            // is taken as held: nothing goes in, and nobody is blamed.
            guard let stored = try? chain.ops(op.seq...op.seq, game: gameID, author: op.author, archive: archive).first else { return true }
            return stored.hash == op.hash
        }
    }

    /// Per author whose newest held ops no signature covers yet (they came
    /// as live pushes), the newest op's seq.
    public var unsignedHeads: [PeerID: UInt64] {
        var out: [PeerID: UInt64] = [:]
        for (author, chain) in chains where chain.last.map({ $0.signature == nil }) ?? false {
            out[author] = UInt64(chain.count)
        }
        return out
    }

    /// Whether `author`'s held op `seq` carries a signature, or left memory
    /// (a signed op after it vouched for it first): nothing to attach.
    func isSigned(author: PeerID, seq: UInt64) -> Bool {
        guard let chain = chains[author] else { return false }
        if chain.isArchived(seq: seq) { return true }
        return chain.heldOp(seq: seq)?.signature != nil
    }

    /// Whether `op` is held here on the strength of its author's link alone:
    /// no signature, its own or a later op's, vouches for it yet.
    public func isVouchedOnly(_ op: Op) -> Bool {
        op.signature == nil && isUnsigned(author: op.author, seq: op.seq)
    }

    /// The seq of `author`'s first held op that no signature covers,
    /// `nil` when every op of its chain is covered.
    public func firstUnsigned(of author: PeerID) -> UInt64? {
        guard let chain = chains[author], chain.lastSigned < chain.count else { return nil }
        return UInt64(chain.lastSigned) + 1
    }

    /// Whether `author`'s op `seq` is held and no signature covers it yet
    /// (no signed op at or after it in the chain).
    public func isUnsigned(author: PeerID, seq: UInt64) -> Bool {
        // An archived op has a signed op after it.
        guard let chain = chains[author], chain.heldOp(seq: seq) != nil else { return false }
        return UInt64(chain.lastSigned) < seq
    }

    /// Segments that bring a replica holding `peer` up to date: per author,
    /// from the peer's head + 1 to this replica's last signed op. The
    /// creator's segment (with the genesis) comes first.
    public func segments(after peer: VersionVector) -> [OpSegment] {
        guard let creator else { return [] }
        var out: [OpSegment] = []
        for author in [creator] + authors.filter({ $0 != creator }) {
            if let s = segment(of: author, after: peer[author]) { out.append(s) }
        }
        return out
    }

    /// The segment of `author`'s ops after `seq`, up to the last signed op
    /// (`nil` when there is none to send, or when ops that left memory
    /// cannot be read back: the peer asks again with its next summary).
    public func segment(of author: PeerID, after seq: UInt64) -> OpSegment? {
        guard let chain = chains[author] else { return nil }
        let last = UInt64(chain.lastSigned)
        guard seq < last, let ops = try? chain.ops((seq + 1)...last, game: gameID, author: author, archive: archive) else { return nil }
        return OpSegment(verifiedOps: ops)
    }
}
