import SweeperCrypto

/// Live pushes: this side's own ops as a link carries them (see ``LiveOp``).
extension SyncSession {
    /// This side's own ops of `game` after `seq` (what the peer holds) as
    /// live pushes, noted as sent; `nil` when there are none or the link
    /// numbered all the games it may. Without `signing`, none carries its
    /// signature, however many went unsigned (ops not kept yet:
    /// ``pushBeforeKeeping(_:replica:)``).
    mutating func live(_ game: GameID, after seq: UInt64, replica: Replica, signing: Bool = true) -> [LiveOp]? {
        guard let me = liveAuthor, let replicaGame = replica.games[game], seq < replicaGame.chainLength(of: me),
            let ref = liveOut.reference(to: game, reverse: liveIn), let ops = try? replicaGame.ops(of: me, after: seq)
        else { return nil }
        let length = replicaGame.chainLength(of: me)
        // The first op names the game as it stands on the link (numbering a
        // new one); the rest by the number or place that gives.
        let then = liveOut.reference(to: game, reverse: liveIn) ?? ref
        let ends = replicaGame.state.map { $0.status != .playing } ?? false
        var out: [LiveOp] = []
        for op in ops {
            var position = LiveOp.Position.absolute(seq: op.seq, lamport: op.lamport, wall: op.wallClockMillis)
            if let newest = liveOut.newest[game], newest.seq + 1 == op.seq, op.lamport > newest.lamport {
                position = .next(
                    lamportStep: op.lamport - newest.lamport - 1,
                    wallChange: Int64(bitPattern: op.wallClockMillis &- newest.wall))
            }
            liveOut.newest[game] = (op.seq, op.lamport, op.wallClockMillis)
            let count = (unsignedOnLink[game]?.count ?? 0) + 1
            var signature: Signature?
            if signing, op.seq == length, count >= Self.headInterval || ends, let s = op.signature {
                signature = s
                unsignedOnLink[game] = nil
            } else {
                unsignedOnLink[game] = (count, op.seq)
            }
            out.append(
                LiveOp(
                    game: out.isEmpty ? ref : then, position: position,
                    payload: op.payload, signature: signature))
        }
        peerHolds[game, default: VersionVector()].advance(me, to: length)
        return out
    }

    /// The hash of `author`'s op before `seq` in `game`, which an op
    /// rebuilt from a live push or a compact segment names: none before seq
    /// 1; `nil` when this replica does not hold that op.
    static func hash(before seq: UInt64, of author: PeerID, in game: GameID, _ replica: Replica) -> OpHash? {
        seq == 1 ? OpHash.none : replica.hash(in: game, author: author, seq: seq - 1)
    }
}
