import Foundation
import Logging
import SweeperConventions
import SweeperCrypto
import SweeperStore
import Synchronization

/// The peers this daemon has met: their names, for every reply that names
/// players, and the addresses they listen on, to dial them again after a
/// restart. Kept in the store's peers table, with the names also in memory:
/// every summary names its players, and a query per player per move would
/// sit on the move's path.
final class PeerBook: Sendable {
    private let store: Store
    private let logger: Logger
    private let names: Mutex<[PeerID: String]>

    /// The book of the peers `store` remembers.
    init(store: Store, logger: Logger) {
        self.store = store
        self.logger = logger
        var known: [PeerID: String] = [:]
        for peer in (try? store.peers()) ?? [] {
            if let id = try? PeerID(parsing: peer.peerID) { known[id] = peer.name }
        }
        names = Mutex(known)
    }

    /// A peer's name as last heard; nil for a peer never met.
    func name(of peer: PeerID) -> String? {
        names.withLock { $0[peer] }
    }

    /// Remembers a peer's name (kept when `name` is empty after cleaning)
    /// and the address it can be dialled at (kept when nil).
    func remember(_ peer: PeerID, name: String, address: String?) {
        let previous = try? store.peers().first { $0.peerID == peer.description }
        let clean = PlayerName.cleaned(name)
        let name = clean.isEmpty ? (previous?.name ?? peer.shortDescription) : clean
        names.withLock { $0[peer] = name }
        do {
            try store.savePeer(StoredPeer(
                peerID: peer.description, name: name, address: address ?? previous?.address, lastSeen: Date()))
        } catch {
            logger.warning("could not remember a peer", metadata: ["error": "\(error)"])
        }
    }

    /// The addresses of peers met before, to dial again at start.
    func addresses() -> [String] {
        ((try? store.peers()) ?? []).compactMap(\.address)
    }
}
