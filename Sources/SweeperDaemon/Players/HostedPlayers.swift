import FoundationEssentials
import SweeperConventions
import SweeperCrypto
import SweeperStore
import Synchronization

/// A player this daemon hosts: a person at the table without a daemon of
/// their own, who plays from a browser paired to them. They have a signing
/// key of their own, kept here, and are a device of the circle like any
/// other (admitted by this daemon, see ``CircleMembers/host(_:name:)``).
struct HostedPlayer: Sendable {
    /// The player's key: it signs their moves, profile, presence and points.
    let identity: SigningIdentity
    /// The name given at `player add` (their profile carries the current one).
    var name: String
    /// The colour given (0: derived from the key; 1–8 a palette colour).
    var colour: UInt8
    /// When the player was added (ms since 1970).
    let addedMillis: UInt64

    /// The player's peer id.
    var id: PeerID { identity.peerID }
}

/// The players this daemon hosts, kept in the store's settings (one JSON
/// value, the keys among it: the state folder is private to the user, as
/// the daemon's own key is) and in memory.
final class HostedPlayers: Sendable {
    /// The setting that holds them.
    static let setting = "players.hosted"
    /// The most players one daemon hosts: a table's worth, and then some.
    static let limit = 16

    private struct Stored: Codable {
        var peer: String
        var secret: String
        var name: String
        var colour: UInt8
        var added: UInt64
    }

    private let store: Store
    private let state: Mutex<[HostedPlayer]>

    /// The players kept in `store`; one whose key does not load is passed over.
    init(store: Store) {
        self.store = store
        var players: [HostedPlayer] = []
        if let text = (try? store.setting(Self.setting)) ?? nil,
            let stored = try? JSONDecoder().decode([Stored].self, from: Data(text.utf8))
        {
            for s in stored {
                guard let bytes = Hex.decode(s.secret), let identity = try? SigningIdentity(secretKeyBytes: bytes),
                    identity.peerID.description == s.peer
                else { continue }
                players.append(HostedPlayer(identity: identity, name: s.name, colour: s.colour, addedMillis: s.added))
            }
        }
        state = Mutex(players)
    }

    /// Every hosted player, in the order they were added.
    var all: [HostedPlayer] { state.withLock { $0 } }

    /// The hosted player whose key is `id`, if any.
    func player(_ id: PeerID) -> HostedPlayer? { state.withLock { $0.first { $0.id == id } } }

    /// The hosted player named `text` (case aside) or whose id starts with
    /// it; nil when none or several match.
    func player(named text: String) -> HostedPlayer? {
        state.withLock { players in
            if let exact = players.first(where: { $0.name.equalsIgnoringCase(text) }) { return exact }
            let upper = text.uppercased()
            let matches = players.filter { !upper.isEmpty && $0.id.description.hasPrefix(upper) }
            return matches.count == 1 ? matches[0] : nil
        }
    }

    /// Keeps a new player (written before this returns).
    func add(_ player: HostedPlayer) throws {
        try change { $0.append(player) }
    }

    /// Forgets a player; its key is gone from this device.
    func remove(_ id: PeerID) throws {
        try change { $0.removeAll { $0.id == id } }
    }

    /// Notes a player's new name or colour.
    func rename(_ id: PeerID, name: String, colour: UInt8) throws {
        try change { players in
            guard let i = players.firstIndex(where: { $0.id == id }) else { return }
            players[i].name = name
            players[i].colour = colour
        }
    }

    private func change(_ body: (inout [HostedPlayer]) -> Void) throws {
        try state.withLock { players in
            var next = players
            body(&next)
            let stored = next.map {
                Stored(peer: $0.id.description, secret: Hex.encode($0.identity.secretKeyBytes), name: $0.name, colour: $0.colour, added: $0.addedMillis)
            }
            let data = try JSONEncoder().encode(stored)
            try store.setSetting(Self.setting, String(decoding: data, as: UTF8.self))
            players = next
        }
    }
}
