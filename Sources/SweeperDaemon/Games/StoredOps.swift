import FoundationEssentials
import SweeperCrypto
import SweeperStore
import SweeperSync

/// The ops a game's replica let go of, read back from the store: the
/// replica keeps a hash prefix per op and its newest ops, and asks here for the
/// rest (a peer catching up from far behind, a replay, a removal's
/// rebuild).
public struct StoredOps: OpArchive {
    let store: Store

    /// Reads back from `store`.
    public init(store: Store) { self.store = store }

    /// The row stored for an op. Its seq and Lamport time are clamped to
    /// SQLite's signed 64 bits (the replica refuses larger ones anyway; the
    /// encoded bytes are what is read back).
    public static func row(_ op: Op, vouched: Bool = false) -> StoredOp {
        StoredOp(
            gameID: op.gameID.description, author: Data(op.author.bytes), seq: Int64(clamping: op.seq),
            lamport: Int64(clamping: op.lamport), bytes: Data(op.encoded), vouched: vouched)
    }

    public func ops(of game: GameID, by author: PeerID, seqs: ClosedRange<UInt64>) throws -> [Op] {
        let rows = try store.opBytes(
            gameID: game.description, author: Data(author.bytes), seqs: Int64(clamping: seqs.lowerBound), through: Int64(clamping: seqs.upperBound))
        return try rows.map { try Op(decoding: $0) }
    }

    public func frozenBoard(of game: GameID, circle: CircleKey) -> [UInt8]? {
        guard let board = try? store.frozenBoard(game: game.description, circle: Data(circle.tag.utf8)) else { return nil }
        return [UInt8](board)
    }
}
