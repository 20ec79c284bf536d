import SweeperCrypto
import SweeperGame

/// Why an op was refused. Refused ops change nothing.
public enum OpRejection: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The signature is missing or not the author's.
    case badSignature
    /// The membership proof is not this circle's proof for the author.
    case notMember
    /// The op does not follow its author's previous op (hash, seq or Lamport time).
    case brokenChain
    /// The op names a cell that is not on the game's board.
    case cellOutOfRange
    /// The op's Lamport time is over ``Op/lamportLimit``, or leads the
    /// game's greatest held Lamport time by more than ``Op/lamportLead``:
    /// no real game gets there, and accepting it would leave no room for
    /// the next move.
    case lamportOutOfRange
    /// The genesis is invalid, or does not match its game id, or appears where no genesis may.
    case invalidGenesis
    /// A different op already holds this author's sequence number.
    case conflictingOp
    /// Too many ops are waiting for a gap or a genesis.
    case pendingLimit
    /// The bytes could not be decoded.
    case malformed
    /// The author was removed from the circle, and the removal did not
    /// keep this op (it comes after the ops the remover held).
    case removedAuthor
    /// The author may not make this op in this game: it is not one of the
    /// players the creator chose (a spectator), the op is the creator's
    /// alone (adding players), or its kind has no place in this game (a
    /// plain move in a private game, a sealed one in an open game).
    case notPlayer
    /// The game is another player's board of the day (its creator's daily
    /// op is in): every op in it is the creator's.
    case dailyOfAnother
    /// The op's game sleeps (its ops only in the store) and could not be
    /// read back: nothing changed, and a later sync brings the op again.
    case storageFault
    /// Its author has written as many ops in this game as a game can take
    /// (``GameReplica/opQuota``): what no player's hands make.
    case overQuota
    /// The op's game sleeps and the message that brought it had read back
    /// as many ops as one message may (``Replica/wakeBudget``): the game is
    /// woken elsewhere and the sender asked again; nothing changed.
    case wakeDeferred
    /// Its author's ops taken here lately reached what one author may fill
    /// in a day (``Replica/overDailyQuota``): what no family's play makes.
    /// Refused, never relayed; a later sync brings them once the day passed.
    case overDailyQuota

    public var description: String { rawValue }
}

/// A head signature that is not its author's signature of the op it names.
struct HeadMismatch: Error {}

/// What inserting ops did.
public struct InsertOutcome: Sendable {
    /// Ops accepted and applied now, in the order they were applied (ops that
    /// were waiting and are now unblocked included). Relay these.
    public var accepted: [Op] = []
    /// Ops refused, with the reason.
    public var rejected: [(gameID: GameID, author: PeerID, seq: UInt64, reason: OpRejection)] = []
    /// Ops already held.
    public var duplicates = 0
    /// Ops held back until a gap or the genesis arrives.
    public var waiting = 0
    /// Ops held without a signature that got theirs now (a head signature,
    /// or a segment that ends with it): store them again, and relay them
    /// (they end a signed run now).
    public var signed: [Op] = []
    /// Ops accepted earlier that left again: a board of the day's daily op
    /// came after other authors' ops in its game, and a board of the day
    /// takes no op but its creator's (see ``OpRejection/dailyOfAnother``).
    /// Delete them from the store; they are not in ``accepted``.
    public var dropped: [Op] = []
    /// Ops held without a signature, on their author's link's word (a live
    /// push), that gave way to a different op of their author at their
    /// place carrying the author's proof (its own signature, or a signed
    /// segment's): what an author leaves behind that pushed a move and
    /// stopped before keeping it, then made another. The author's ops from
    /// that place on went with them. Delete them from the store; they are
    /// not in ``accepted``.
    public var replaced: [Op] = []

    /// Creates an empty outcome.
    public init() {}

    /// Why `op` itself was refused, or `nil` when it was not. Other ops can
    /// be refused by the same insert: an op that was waiting for this one
    /// and turns out not to follow it.
    public func rejection(of op: Op) -> OpRejection? {
        rejected.first { $0.gameID == op.gameID && $0.author == op.author && $0.seq == op.seq }?.reason
    }

    mutating func merge(_ other: InsertOutcome) {
        accepted += other.accepted
        rejected += other.rejected
        duplicates += other.duplicates
        waiting += other.waiting
        signed += other.signed
        noteDropped(other.dropped)
        noteReplaced(other.replaced)
    }

    /// Notes `ops` as replaced: out of ``accepted`` and ``signed`` if they
    /// were in them.
    mutating func noteReplaced(_ ops: [Op]) {
        replaced += takeOut(ops)
    }

    /// Notes `ops` as dropped: out of ``accepted`` and ``signed`` if they
    /// were in them.
    mutating func noteDropped(_ ops: [Op]) {
        dropped += takeOut(ops)
    }

    /// Takes `ops` out of ``accepted`` and ``signed``; returns them.
    private mutating func takeOut(_ ops: [Op]) -> [Op] {
        guard !ops.isEmpty else { return [] }
        let gone = Set(ops.map(\.hash))
        accepted.removeAll { gone.contains($0.hash) }
        signed.removeAll { gone.contains($0.hash) }
        return ops
    }
}
