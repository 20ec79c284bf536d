import SweeperCrypto
import SweeperSync
import Synchronization

/// What peers' messages may cost the event loop in waking sleeping games
/// (rebuilding each from its ops in the store), and the games woken off
/// the loop for them instead.
///
/// A message from a member may need games awake: its ops, segments and
/// head signatures passed every check. It reads back at most
/// ``perMessage`` ops on the loop, and its peer at most ``perSecond`` a
/// second (a bucket that refills); the games past that are woken one at a
/// time on another thread, at most ``queuedPerPeer`` waiting per peer and
/// ``queuedLimit`` in all, and the peer is then asked for their ops again.
/// Games past those limits wait for the next anti-entropy round.
final class PeerWakes: Sendable {
    /// The most ops one message reads back on the loop: some 10 ms.
    static let perMessage = Replica.wakeBudgetPerMessage
    /// The most ops one peer's messages read back on the loop a second.
    static let perSecond = 8_192.0
    /// The most games waiting to be woken off the loop for one peer.
    static let queuedPerPeer = 64
    /// The most games waiting to be woken off the loop in all.
    static let queuedLimit = 512

    private struct State {
        /// Each peer's credit of ops and when it was counted (seconds).
        var credit: [PeerID: (ops: Double, at: Double)] = [:]
        /// The games waiting to be woken, in order, and who asked for each.
        var queue: [GameID] = []
        var askers: [GameID: Set<PeerID>] = [:]
        /// The peer each waiting game counts against, and how many each has.
        var owner: [GameID: PeerID] = [:]
        var queuedBy: [PeerID: Int] = [:]
        /// Whether a game is being woken now.
        var running = false
    }

    private let state = Mutex(State())

    init() {}

    /// The ops a message from `peer` may read back on the loop now.
    func budget(for peer: PeerID, now: Double) -> Int {
        state.withLock { s in
            let held = s.credit[peer].map { min(Self.perSecond, $0.ops + (now - $0.at) * Self.perSecond) } ?? Self.perSecond
            if s.credit.count > 1_024 { s.credit = s.credit.filter { now - $0.value.at < 1 } }
            s.credit[peer] = (held, now)
            return min(Self.perMessage, Int(max(0, held)))
        }
    }

    /// Takes what a message from `peer` read back from its credit.
    func spent(_ ops: Int, by peer: PeerID) {
        guard ops > 0 else { return }
        state.withLock { s in s.credit[peer]?.ops -= Double(ops) }
    }

    /// Queues the games `peer`'s message needed awake, within the limits.
    func queue(_ games: [GameID], for peer: PeerID) {
        state.withLock { s in
            for game in games {
                if s.askers[game] != nil {
                    s.askers[game]?.insert(peer)
                    continue
                }
                guard s.queue.count < Self.queuedLimit, s.queuedBy[peer, default: 0] < Self.queuedPerPeer else { break }
                s.queue.append(game)
                s.askers[game] = [peer]
                s.owner[game] = peer
                s.queuedBy[peer, default: 0] += 1
            }
        }
    }

    /// The next game to wake off the loop, when none is being woken.
    func next() -> GameID? {
        state.withLock { s in
            guard !s.running, !s.queue.isEmpty else { return nil }
            s.running = true
            return s.queue.removeFirst()
        }
    }

    /// `game` is woken (or could not be): returns the peers that asked for it.
    func finished(_ game: GameID) -> Set<PeerID> {
        state.withLock { s in
            s.running = false
            if let peer = s.owner.removeValue(forKey: game) {
                s.queuedBy[peer, default: 1] -= 1
                if s.queuedBy[peer] == 0 { s.queuedBy[peer] = nil }
            }
            return s.askers.removeValue(forKey: game) ?? []
        }
    }
}
