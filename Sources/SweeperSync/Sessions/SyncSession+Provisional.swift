import SweeperCrypto

/// Peer protocol 18: a move goes to the peers before its author keeps it.
///
/// The author pushes its new op live, without a signature, before its
/// store's commit (and its fsync), and signs nothing before the commit.
/// Should it stop in between, the peers hold an op it never kept, and its
/// next op takes the same place. So, on a link where both sides speak 18,
/// the peer's ops held only on the link's word (no signature covers them)
/// give way to what the peer says of its own chain:
/// - its summary says its chain ends before them: they go;
/// - a head signature of its own that is not of the op held: that op and
///   the unsigned ones around it go, and a summary asks for what it kept;
/// - a live push of its at the place of its newest op held unsigned, with
///   another op: it takes that place.
///
/// A signed op at a place held unsigned takes it on any link
/// (``InsertOutcome/replaced``). Two signed ops at one place are still a
/// conflict, and nothing signed ever gives way.
extension SyncSession {
    /// This side's own new `ops` as live pushes without a signature, before
    /// they are kept: nothing when the link is not ``provisional``, or
    /// cannot take them live now (no summary of the peer yet, or the peer
    /// lacks the ops before them). Whatever is not sent here goes after the
    /// commit, with ``push(_:replica:)``, as before.
    public mutating func pushBeforeKeeping(_ ops: [Op], replica: Replica) -> [SyncMessage] {
        guard provisional, hasPeerSummary, let me = liveAuthor else { return [] }
        let own = ops.filter { $0.author == me }
        var out: [LiveOp] = []
        for game in Set(own.map(\.gameID)).sorted() where sends(game, of: replica) {
            let earliest = own.filter { $0.gameID == game }.map(\.seq).min() ?? 1
            let held = peerHolds[game]?[me] ?? 0
            guard held + 1 >= earliest, let pushed = live(game, after: held, replica: replica, signing: false) else { continue }
            out += pushed
        }
        return out.isEmpty ? [] : [.live(out)]
    }

    /// The signatures of this side's chains on the link that are due one
    /// (``headInterval`` ops pushed live unsigned, or the game over), as a
    /// heads message: what a push before the commit left out, sent once
    /// the ops are kept.
    public mutating func signDueHeads(replica: Replica) -> [SyncMessage] {
        guard provisional else { return [] }
        return signHeads(replica: replica) { game, count in
            count >= Self.headInterval || replica.games[game]?.state.map { $0.status != .playing } == true
        }
    }

    /// The peer's summary (`games`) says where each of its own chains
    /// ends: its ops held here after that, unsigned, are ones it pushed and
    /// never kept, and go; this side's summary then tells the peer what it
    /// holds now (it believes this side holds them, and would push its next
    /// op at their place to nobody).
    mutating func dropLostOps(said games: [GameID: VersionVector], replica: inout Replica, into step: inout Step) {
        guard let peer else { return }
        let before = step.outcome.replaced.count
        defer { if step.outcome.replaced.count > before { step.replies.append(summaryMessage(of: replica, wantsReply: false)) } }
        for (game, vector) in games.sorted(by: { $0.key < $1.key }) {
            let held = replica.games[game].map { $0.chainLength(of: peer) } ?? replica.sleeping[game]?.vector[peer] ?? 0
            guard held > vector[peer] else { continue }
            step.outcome.merge(replica.dropUnsigned(of: peer, in: game, keeping: vector[peer]))
        }
    }

    /// A head signature of the peer's own (`chain`) did not match the op
    /// held there: when no signature covers that op, it and the peer's
    /// other unsigned ops of the game go (it pushed them, then stopped
    /// before keeping one), and a summary asks for what it kept. Whether
    /// they went; when not, the head is a violation as before.
    mutating func dropLostOps(under chain: ChainHead, replica: inout Replica, into step: inout Step) -> Bool {
        guard let peer, chain.author == peer, replica.games[chain.game]?.isUnsigned(author: peer, seq: chain.seq) == true else { return false }
        let outcome = replica.dropUnsigned(of: peer, in: chain.game, keeping: nil)
        guard !outcome.replaced.isEmpty else { return false }
        step.outcome.merge(outcome)
        step.replies.append(summaryMessage(of: replica, wantsReply: true))
        return true
    }
}
