import SweeperConventions
import SweeperCrypto

/// The signatures of chain heads a link's live pushes left unsigned.
extension SyncSession {
    /// Signatures of this side's chain heads that its live pushes on this
    /// link left unsigned: what a side sends when its player pauses, so that
    /// the peer may relay the ops and serve them in catch-ups.
    public mutating func signHeads(replica: Replica) -> [SyncMessage] {
        signHeads(replica: replica) { _, _ in true }
    }

    /// The heads message of the chains left unsigned on the link that are
    /// `due` (by game, and how many ops went unsigned); those are unsigned
    /// on the link no more.
    mutating func signHeads(replica: Replica, where due: (GameID, Int) -> Bool) -> [SyncMessage] {
        guard let me = liveAuthor else { return [] }
        var heads: [HeadSignature] = []
        for (game, unsigned) in unsignedOnLink.sorted(by: { $0.key < $1.key }) where due(game, unsigned.count) {
            unsignedOnLink[game] = nil
            guard let signature = replica.op(in: game, author: me, seq: unsigned.seq)?.signature,
                let head = head(of: ChainHead(game: game, author: me, seq: unsigned.seq), signature: signature)
            else { continue }
            heads.append(head)
        }
        return heads.isEmpty ? [] : [.heads(heads)]
    }

    /// A signature of `chain` as this side sends it on the link: the game
    /// named as the link knows it (numbered when new), and no author key
    /// for this side's own chain; `nil` once the link numbered all the
    /// games it may.
    mutating func head(of chain: ChainHead, signature: Signature) -> HeadSignature? {
        guard let ref = liveOut.reference(to: chain.game, reverse: liveIn) else { return nil }
        return HeadSignature(game: ref, author: chain.author == liveAuthor ? nil : chain.author, seq: chain.seq, signature: signature)
    }

    /// Asks the peer for signatures of the chains this replica holds
    /// without one (in the games the peer is sent): the start of a link.
    public func askForSignatures(replica: Replica) -> [SyncMessage] {
        let chains = replica.unsignedHeads.filter { sends($0.game, of: replica) }
        return chains.isEmpty ? [] : [.unsigned(chains)]
    }
}
