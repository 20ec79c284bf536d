import Foundation
import SweeperCrypto

@testable import SweeperSync

/// Moves pushed before they are kept (peer protocol 18), as the daemon
/// pushes them: the author's move goes live and unsigned to the peers of
/// protocol 18, then its commit takes a while, during which its loop takes
/// nothing else; then it is kept and goes to the other peers, or its author
/// stops first and the move is gone with it.
extension Simulation {
    var trace: Bool { ProcessInfo.processInfo.environment["SWEEPER_SIM_TRACE"] != nil }

    /// A move whose commit is under way.
    struct Keeping {
        let op: Op
        let outcome: InsertOutcome
        /// When the commit ends, and whether its author stops first.
        let endsAt: Int
        let lost: Bool
    }

    /// What a forged head signature (`e`) does when it comes, now that a
    /// receiver may have let go of the op it names: nothing when the
    /// receiver no longer holds that op; on a link of protocol 18, when it
    /// is of its sender's own chain and names an op held unsigned, the ops
    /// held so give way (the sender lost them, as far as the receiver can
    /// tell); else it is refused, and breaks the link when of the sender's
    /// own chain.
    enum ForgedHead { case nothing, givesWay, refused }

    func effect(of e: Envelope) -> ForgedHead {
        guard let gameID, case .heads(let heads)? = try? SyncMessage(decoding: e.bytes), let head = heads.first else { return .refused }
        let author = head.author ?? peers[e.from].author.identity.peerID
        let receiver = peers[e.to].replica
        guard let game = receiver.awakened(gameID), game.chainLength(of: author) >= head.seq else { return .nothing }
        if head.author == nil, isProvisional(e.from, e.to), receiver.mayGiveWay(author), game.isUnsigned(author: author, seq: head.seq) {
            return .givesWay
        }
        return .refused
    }

    /// Whether a link speaks protocol 18: about two thirds of those of protocol 15.
    func isProvisional(_ a: Int, _ b: Int) -> Bool {
        takesChains(a, b) && ((UInt64(a + b) &* 31) ^ (UInt64(a * b) &* 17) ^ (seed &* 0x9E37)) % 3 != 0
    }

    /// Peer `p` makes `op`: in its replica at once, pushed to its peers of
    /// protocol 18, and kept a few ticks later (``endKeeping()``).
    mutating func beginKeeping(_ op: Op, at p: Int) {
        let outcome = peers[p].replica.insert(op)
        for n in neighbours(of: p) {
            guard var session = peers[p].sessions.removeValue(forKey: n) else { continue }
            let out = session.pushBeforeKeeping([op], replica: peers[p].replica)
            peers[p].sessions[n] = session
            for m in out {
                // No signature leaves before its op is kept.
                if case .live(let ops) = m, ops.contains(where: { $0.signature != nil }) { signedBeforeKept += 1 }
                send(m, from: p, to: n)
            }
        }
        if trace { print("t\(now) \(p) keeps \(op.author) seq \(op.seq) \(op.hash)") }
        keeping[p] = Keeping(
            op: op, outcome: outcome, endsAt: now + 1 + rng.below(config.maxDelay + 2),
            lost: outcome.rejection(of: op) == nil && rng.below(100) < config.lostBeforeKeptPercent)
    }

    /// Ends the commits due: kept (stored, then pushed to every peer), or
    /// lost as their authors stop (a restart from what their disks hold).
    mutating func endKeeping() throws {
        for (p, k) in keeping.sorted(by: { $0.key < $1.key }) where k.endsAt <= now {
            if k.lost {
                if trace { print("t\(now) \(p) lost seq \(k.op.seq)") }
                try restart(p)
            } else {
                kept(at: p)
            }
        }
    }

    /// Peer `p`'s commit under way ends, its move kept: stored, then pushed
    /// to every peer (those that took it before only get what is due, a
    /// head signature).
    mutating func kept(at p: Int) {
        guard let k = keeping.removeValue(forKey: p) else { return }
        store(k.outcome, at: p)
        noteValid(k.op)
        relay(k.outcome.accepted, at: p, except: nil)
    }
}
