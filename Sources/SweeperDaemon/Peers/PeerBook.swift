import FoundationEssentials
import Logging
import SweeperConventions
import SweeperCrypto
import SweeperMessages
import SweeperNet
import SweeperStore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The players this daemon knows: their profiles (signed names and
/// colours, replicated circle-wide: see ``ProfileNote``), the names heard
/// from peers met (hellos, mDNS) for players without one, and the
/// addresses peers listen on, to dial them again after a restart. Kept in
/// the store's profiles and peers tables, with names and profiles also in
/// memory: every summary names its players, and a query per player per
/// move would sit on the move's path.
final class PeerBook: Sendable {
    private let store: Store
    /// What a profile's serial and a peer's last sight are read by.
    private let clock: any DaemonClock
    private let logger: Logger
    private let names: Mutex<[PeerID: String]>
    private let profiles: Mutex<[PeerID: ProfileNote]>
    private let changes = Atomic<UInt64>(0)

    /// The book of the peers `store` remembers.
    init(store: Store, clock: any DaemonClock = SystemClock(), logger: Logger) {
        self.store = store
        self.clock = clock
        self.logger = logger
        var known: [PeerID: String] = [:]
        for peer in (try? store.peers()) ?? [] {
            // Cleaned again: a name kept by an earlier release may hold what names may no longer.
            if let id = try? PeerID(parsing: peer.peerID) {
                let clean = PlayerName.cleaned(peer.name)
                known[id] = clean.isEmpty ? id.shortDescription : clean
            }
        }
        names = Mutex(known)
        var kept: [PeerID: ProfileNote] = [:]
        for bytes in (try? store.profiles()) ?? [] {
            // A stored profile was checked when it came; one that no longer reads is passed over.
            if let note = try? ProfileNote(decoding: bytes[...]), note.isAuthentic { kept[note.author] = note }
        }
        profiles = Mutex(kept)
    }

    /// A player's name: their profile's, else as last heard from their
    /// daemon; nil for a player never heard of. Cleaned as it is shown
    /// (a profile signed by a release that kept format characters has them
    /// dropped here).
    func name(of peer: PeerID) -> String? {
        if let profile = profiles.withLock({ $0[peer] }) {
            let name = PlayerName.cleaned(profile.name)
            if !name.isEmpty { return name }
        }
        return names.withLock { $0[peer] }
    }

    /// The players other than `peer` whose name is `name` or looks like it
    /// (case aside, and Cyrillic or Greek look-alike letters aside: see
    /// ``PlayerName/skeleton(_:)``), among `among`.
    /// `own` names this device's player, whose name this book may not hold.
    func others(named name: String, than peer: PeerID, among: some Sequence<PeerID>, own: (id: PeerID, name: String)? = nil) -> [PeerID] {
        let skeleton = PlayerName.skeleton(name)
        func named(_ p: PeerID) -> String? { self.name(of: p) ?? (p == own?.id ? own?.name : nil) }
        let everyone = own.map { o in Array(among) + (among.contains(o.id) ? [] : [o.id]) } ?? Array(among)
        return everyone.filter { $0 != peer && named($0).map { PlayerName.skeleton($0) == skeleton } == true }
    }

    /// A player's name told apart from another member's of the same name,
    /// or one that looks like it (two devices that chose one name while
    /// apart, or a peer's profile that mimics another's): `Mum (AB12C)`.
    /// `own` names this device's player (whose name this book may not
    /// hold): it is told apart too, and tells others apart.
    func distinctName(of peer: PeerID, among members: some Sequence<PeerID>, own: (id: PeerID, name: String)? = nil) -> String? {
        guard let name = name(of: peer) ?? (peer == own?.id ? own?.name : nil) else { return nil }
        return others(named: name, than: peer, among: members, own: own).isEmpty ? name : "\(name) (\(peer.shortDescription))"
    }

    /// A count of the changes to the names and profiles held: what is
    /// worked out from them (``PlayerNames``) holds while it stays the same.
    var generation: UInt64 { changes.load(ordering: .acquiring) }

    /// A player's profile, when one came.
    func profile(of peer: PeerID) -> ProfileNote? {
        profiles.withLock { $0[peer] }
    }

    /// Every profile held, by author.
    var allProfiles: [ProfileNote] {
        profiles.withLock { Array($0.values) }.sorted { $0.author < $1.author }
    }

    /// Takes an authentic profile: kept (and stored) when it is newer than
    /// the one held. Returns whether it was.
    @discardableResult
    func take(_ note: ProfileNote) -> Bool {
        let newer = profiles.withLock { all in
            guard note.serial > all[note.author]?.serial ?? 0 else { return false }
            all[note.author] = note
            return true
        }
        guard newer else { return false }
        changes.add(1, ordering: .releasing)
        do {
            try store.saveProfile(author: note.author.bytes, serial: note.serial, note: note.encoded)
        } catch {
            logger.warning("could not keep a profile", metadata: ["error": "\(error)"])
        }
        return true
    }

    /// Settings that keep what `sweeper profile` chose on this device.
    static let profileNameSetting = "profile.name"
    static let profileColourSetting = "profile.colour"

    /// This daemon's own profile with `name` and `colour`: the one held when
    /// it says the same, else a newly signed one (kept, and to be sent).
    @discardableResult
    func ownProfile(identity: SigningIdentity, name: String, colour: UInt8) -> ProfileNote {
        let held = profile(of: identity.peerID)
        if let held, held.name == PlayerName.cleaned(name), held.colour == min(colour, ProfileNote.colourLimit) { return held }
        let now = clock.wallMillis
        let note = ProfileNote(signing: identity, serial: max(now, (held?.serial ?? 0) + 1), name: name, colour: colour)
        take(note)
        return note
    }

    /// Remembers a peer's name (kept when `name` is empty after cleaning)
    /// and the address it can be dialled at (kept when nil).
    func remember(_ peer: PeerID, name: String, address: String?) {
        let previous = try? store.peers().first { $0.peerID == peer.description }
        let clean = PlayerName.cleaned(name)
        // The name held is the stored one, cleaned when it was read back.
        let name = clean.isEmpty ? (names.withLock { $0[peer] } ?? peer.shortDescription) : clean
        if names.withLock({ $0.updateValue(name, forKey: peer) }) != name { changes.add(1, ordering: .releasing) }
        do {
            try store.savePeer(
                StoredPeer(
                    peerID: peer.description, name: name, address: address ?? previous?.address,
                    lastSeen: Date(timeIntervalSince1970: Double(clock.wallMillis) / 1000)),
                durability: .deferred)
        } catch {
            logger.warning("could not remember a peer", metadata: ["error": "\(error)"])
        }
    }

    /// The addresses of peers met before, to dial again at start, with the
    /// peer met at each.
    func addresses() -> [(address: String, peer: PeerID?)] {
        ((try? store.peers()) ?? []).compactMap { p in p.address.map { ($0, try? PeerID(parsing: p.peerID)) } }
    }
}
