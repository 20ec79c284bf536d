import SweeperCrypto

/// Where a replica reads back the accepted ops it no longer holds in
/// memory: the daemon's store. A replica without one holds every op.
///
/// A replica lets an op go to the archive only once its holder says the
/// store has it (``Replica/noteStored(_:)``) and a signature covers it, so
/// the archive is asked only for ops it holds, as they will stay.
public protocol OpArchive: Sendable {
    /// `author`'s accepted ops of `game` numbered `seqs`, in seq order;
    /// throws when they cannot all be read.
    func ops(of game: GameID, by author: PeerID, seqs: ClosedRange<UInt64>) throws -> [Op]

    /// The frozen board of `game` kept for `circle` (see
    /// ``GameReplica/frozenBoard(minimumOps:)``), when one is: a wake reads it instead
    /// of replaying the game's ops. It describes the ops held now, or none
    /// is given.
    func frozenBoard(of game: GameID, circle: CircleKey) -> [UInt8]?
}

extension OpArchive {
    /// No frozen board: every wake replays the game's ops.
    public func frozenBoard(of game: GameID, circle: CircleKey) -> [UInt8]? { nil }
}

/// The archive could not give back ops it was said to hold.
public struct OpArchiveMiss: Error, CustomStringConvertible {
    /// The game, author and seqs asked for.
    public let game: GameID, author: PeerID, seqs: ClosedRange<UInt64>

    public var description: String { "ops \(seqs) of \(author.shortDescription) in \(game) are not in the store" }
}

/// One author's accepted ops of a game: a prefix of every op's hash, and
/// the ops themselves from the first not yet archived on. An op is
/// archived (read back from the ``OpArchive`` when asked for) once the
/// store holds it, a signed op after it is held, and it is not among the
/// newest few (``Replica/defaultRecentOpsKept`` unless the replica says
/// otherwise): the chain's newest op, its newest signed op and every op no
/// signature covers yet stay in memory, so that following the chain,
/// signing it and live pushes never read the disk.
struct OpChain: Sendable {
    /// The first 8 bytes of an op's hash. An op that left memory is known
    /// by them: an op at its place with another prefix is another op; one
    /// with the same prefix is most likely the same op, and is compared
    /// whole with the op read back to be sure (an author can make two of
    /// its ops share 8 bytes of hash in some 2³² tries).
    struct HashPrefix: Equatable, Sendable {
        let value: UInt64

        init(_ hash: OpHash) {
            value = hash.bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
        }

        /// The prefix whose bytes, big-endian, are `value` (as a frozen
        /// board writes it down).
        init(value: UInt64) { self.value = value }
    }

    /// How an op compares with the one held at its place.
    enum Match {
        /// The same op.
        case same
        /// Another op.
        case different
        /// An op that left memory with the same hash prefix: read it back to be sure.
        case samePrefix
    }

    /// Every op's hash prefix, in seq order.
    private var prefixes = ChunkedArray<HashPrefix>()

    /// The number of accepted ops.
    var count: Int { prefixes.count }
    /// The ops after the first ``archived``, in seq order.
    private(set) var held: [Op] = []
    /// How many of the chain's first ops are only in the archive.
    private(set) var archived = 0
    /// How many of the chain's first ops the store is known to hold.
    private(set) var stored = 0

    /// An empty chain.
    init() {}

    /// A chain as a frozen board wrote it down: every op's hash prefix,
    /// the first `archived` ops in the store alone, and `held` the ops
    /// after them, all stored. `nil` when the held ops are not the ones
    /// the prefixes name, in seq order, each following the one before.
    init?(prefixes: ChunkedArray<HashPrefix>, archived: Int, held: [Op]) {
        guard !held.isEmpty, archived >= 0, archived + held.count == prefixes.count else { return nil }
        for (i, op) in held.enumerated() {
            guard op.seq == UInt64(archived + i + 1), prefixes[archived + i] == HashPrefix(op.hash) else { return nil }
            if i > 0 { guard op.previous == held[i - 1].hash else { return nil } }
        }
        self.prefixes = prefixes
        self.archived = archived
        self.held = held
        stored = prefixes.count
    }

    /// Op `seq`'s hash prefix (1 ≤ `seq` ≤ ``count``).
    func hashPrefix(seq: Int) -> HashPrefix { prefixes[seq - 1] }

    /// The newest op (always held).
    var last: Op? { held.last }

    /// How `hash`'s op compares with op `seq`: for a held op by its whole
    /// hash, for one that left memory by its prefix (``Match/different``
    /// when `seq` is not held).
    func match(seq: UInt64, hash: OpHash) -> Match {
        if let held = heldOp(seq: seq) { return held.hash == hash ? .same : .different }
        guard seq >= 1, seq <= UInt64(count) else { return .different }
        return prefixes[Int(seq) - 1] == HashPrefix(hash) ? .samePrefix : .different
    }

    /// Op `seq` when it is in memory; `nil` when archived or not held.
    func heldOp(seq: UInt64) -> Op? {
        guard seq > UInt64(archived), seq <= UInt64(count) else { return nil }
        return held[Int(seq) - archived - 1]
    }

    /// Whether op `seq` is only in the archive.
    func isArchived(seq: UInt64) -> Bool { seq >= 1 && seq <= UInt64(archived) }

    /// The seq of the newest op that carries its own signature, 0 when none
    /// is held (every archived op comes before a held one that does).
    var lastSigned: Int {
        guard let i = held.lastIndex(where: { $0.signature != nil }) else { return 0 }
        return archived + i + 1
    }

    /// Ops `seqs` in order: held ones from memory, archived ones from `archive`.
    func ops(_ seqs: ClosedRange<UInt64>, game: GameID, author: PeerID, archive: (any OpArchive)?) throws -> [Op] {
        guard seqs.lowerBound >= 1, seqs.upperBound <= UInt64(count) else {
            throw OpArchiveMiss(game: game, author: author, seqs: seqs)
        }
        var out: [Op] = []
        out.reserveCapacity(seqs.count)
        if seqs.lowerBound <= UInt64(archived) {
            let upper = min(seqs.upperBound, UInt64(archived))
            guard let archive else { throw OpArchiveMiss(game: game, author: author, seqs: seqs.lowerBound...upper) }
            let read = try archive.ops(of: game, by: author, seqs: seqs.lowerBound...upper)
            // The archive gives back exactly the ops this chain holds.
            guard read.count == Int(upper - seqs.lowerBound + 1),
                read.enumerated().allSatisfy({
                    $0.element.seq == seqs.lowerBound + UInt64($0.offset) && match(seq: $0.element.seq, hash: $0.element.hash) != .different
                })
            else { throw OpArchiveMiss(game: game, author: author, seqs: seqs.lowerBound...upper) }
            out += read
        }
        let from = max(seqs.lowerBound, UInt64(archived) + 1)
        if from <= seqs.upperBound {
            out += held[(Int(from) - archived - 1)...(Int(seqs.upperBound) - archived - 1)]
        }
        return out
    }

    /// Appends the next op.
    mutating func append(_ op: Op) {
        prefixes.append(HashPrefix(op.hash))
        held.append(op)
    }

    /// Drops the newest `n` ops, all of them held (what a segment that
    /// cannot go in whole appended: nothing is archived while one goes in).
    mutating func removeLast(_ n: Int) {
        let n = min(n, held.count)
        held.removeLast(n)
        dropHashes(after: count - n)
    }

    /// Keeps the hashes of the first `n` ops only.
    private mutating func dropHashes(after n: Int) {
        prefixes.removeAll(after: n)
        stored = min(stored, n)
    }

    /// Replaces held op `seq` with `op` (the same op, signed now).
    mutating func replace(seq: UInt64, with op: Op) {
        guard seq > UInt64(archived), seq <= UInt64(count) else { return }
        held[Int(seq) - archived - 1] = op
    }

    /// Keeps the first `n` ops only, all of them in memory again (what a
    /// signature covered may be dropped with the op that carried it).
    mutating func truncate(to n: Int, game: GameID, author: PeerID, archive: (any OpArchive)?) throws {
        let kept = n == 0 ? [] : try ops(1...UInt64(n), game: game, author: author, archive: archive)
        held = kept
        archived = 0
        dropHashes(after: n)
    }

    /// Notes that the store holds the first `seq` ops, and lets go of the
    /// ops that may be archived now (when there is an archive).
    /// The newest `recent` ops (at least one) stay.
    mutating func noteStored(through seq: Int, archiving: Bool, keepingRecent recent: Int) {
        stored = max(stored, min(seq, count))
        guard archiving else { return }
        let bound = min(stored, lastSigned - 1, count - max(1, recent))
        guard bound > archived else { return }
        // A new array, not `removeFirst`, which would keep the capacity the old ops took.
        held = Array(held[(bound - archived)...])
        archived = bound
    }
}
