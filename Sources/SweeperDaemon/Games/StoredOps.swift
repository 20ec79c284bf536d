import FoundationEssentials
import SweeperCrypto
import SweeperStore
import SweeperSync

/// The ops a game's replica let go of, read back from the store: the
/// replica keeps a hash per op and its newest ops, and asks here for the
/// rest (a peer catching up from far behind, a replay, a removal's
/// rebuild).
struct StoredOps: OpArchive {
    let store: Store

    func ops(of game: GameID, by author: PeerID, seqs: ClosedRange<UInt64>) throws -> [Op] {
        let rows = try store.opBytes(
            gameID: game.description, author: Data(author.bytes), seqs: Int64(clamping: seqs.lowerBound), through: Int64(clamping: seqs.upperBound))
        return try rows.map { try Op(decoding: [UInt8]($0)) }
    }
}
