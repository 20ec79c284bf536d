import SweeperCrypto
import Synchronization

/// The players' names and letters as the views show them, worked out once
/// for each state of what they come from: the circle's members
/// (``CircleMembers/generation``), the names and profiles heard
/// (``PeerBook/generation``) and the player answered for. Telling a name
/// apart from every other member's compares the look of each member's
/// name; done again for every event, it cost more than the rest of a
/// cursor's way through the daemon.
final class PlayerNames: Sendable {
    /// What the names held were worked out from.
    struct Key: Equatable, Sendable {
        var members: UInt64
        var book: UInt64
        var own: PeerID
        var ownName: String
    }

    private struct Held: Sendable {
        var key: Key
        var names: [PeerID: String] = [:]
        var letters: [PeerID: Character]?
    }

    /// The most names held at once: names are asked of members and of the
    /// authors of ops (removed devices among them); past it, they start again.
    static let limit = 4096

    private let held = Mutex<Held?>(nil)

    /// `peer`'s name at `key`: held, else worked out by `work` (outside the
    /// lock: it reads the peer book and the membership) and kept.
    func name(of peer: PeerID, at key: Key, _ work: () -> String) -> String {
        if let known = held.withLock({ $0?.key == key ? $0?.names[peer] : nil }) { return known }
        let name = work()
        held.withLock { held in
            if held?.key != key || held?.names.count ?? 0 >= Self.limit { held = Held(key: key, letters: held?.key == key ? held?.letters : nil) }
            held?.names[peer] = name
        }
        return name
    }

    /// Every member's letter at `key`: held, else worked out by `work` and kept.
    func letters(at key: Key, _ work: () -> [PeerID: Character]) -> [PeerID: Character] {
        if let known = held.withLock({ $0?.key == key ? $0?.letters : nil }) { return known }
        let letters = work()
        held.withLock { held in
            if held?.key != key { held = Held(key: key) }
            held?.letters = letters
        }
        return letters
    }
}
