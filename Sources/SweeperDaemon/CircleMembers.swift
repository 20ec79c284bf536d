import Foundation
import Logging
import SweeperCrypto
import SweeperMembership
import SweeperStore
import SweeperSync
import Synchronization

/// This daemon's copy of its circle's membership records (see
/// ``CircleMembership``), kept in the store's membership table and in
/// memory. A device that is not a member when it starts or joins founds:
/// a circle made by an earlier release (or a new circle) becomes one whose
/// devices are all members.
final class CircleMembers: Sendable {
    private let store: Store
    private let identity: SigningIdentity
    private let logger: Logger
    private let state: Mutex<CircleMembership>

    /// The membership of the circle whose first key is `firstKey`, as kept
    /// in `store`; this device founds it when it is not a member.
    init(store: Store, identity: SigningIdentity, firstKey: CircleKey, logger: Logger) {
        self.store = store
        self.identity = identity
        self.logger = logger
        state = Mutex(Self.load(store, firstKey: firstKey, logger: logger))
        foundIfNeeded()
    }

    private static func load(_ store: Store, firstKey: CircleKey, logger: Logger) -> CircleMembership {
        var membership = CircleMembership(firstKey: firstKey)
        var records: [MembershipRecord] = []
        for bytes in (try? store.membershipRecords(circle: membership.circle.bytes)) ?? [] {
            // A stored record was checked when it came; one that no longer reads is passed over.
            if let record = try? MembershipRecord(decoding: bytes) { records.append(record) }
        }
        let outcome = membership.insert(records)
        if outcome.added.count != records.count {
            logger.warning("some stored membership records did not go back in", metadata: ["kept": "\(outcome.added.count)", "stored": "\(records.count)"])
        }
        return membership
    }

    /// Founds the circle for this device when it is neither a member nor removed.
    private func foundIfNeeded() {
        let me = identity.peerID
        let made: MembershipRecord? = state.withLock { membership in
            guard !membership.view.isMember(me), !membership.view.isRemoved(me) else { return nil }
            return membership.record(
                .found(proof: membership.firstKey.membershipProof(for: me)), by: identity, atMillis: Date().millis)
        }
        if let made { save([made]) }
    }

    /// Moves to another circle (after `join`): its records, then founding when needed.
    func circleChanged(to firstKey: CircleKey) {
        let loaded = Self.load(store, firstKey: firstKey, logger: logger)
        state.withLock { $0 = loaded }
        foundIfNeeded()
    }

    /// Who is in the circle now.
    var view: MembershipView { state.withLock { $0.view } }

    /// Every record held, parents first, encoded: what a newly linked peer is sent.
    var encodedRecords: [[UInt8]] { state.withLock { $0.ordered.map(\.encoded) } }

    /// What taking a peer's records did.
    struct Intake {
        /// Records new here, in order: to be sent on to the other peers.
        var added: [[UInt8]] = []
        /// Why records were refused (a bad signature, another circle, limits).
        var refused: [CircleMembership.Refusal] = []
    }

    /// Takes records a peer sent: the new ones are kept. Throws when one
    /// cannot be decoded (the peer is dropped).
    func take(_ encoded: [[UInt8]]) throws(SyncDecodingError) -> Intake {
        var records: [MembershipRecord] = []
        for bytes in encoded { records.append(try MembershipRecord(decoding: bytes)) }
        let outcome = state.withLock { $0.insert(records) }
        save(outcome.added)
        return Intake(added: outcome.added.map(\.encoded), refused: outcome.refused)
    }

    private func save(_ records: [MembershipRecord]) {
        guard let circle = records.first?.circle else { return }
        do {
            try store.saveMembershipRecords(circle: circle.bytes, records.map { (hash: $0.hash.bytes, record: $0.encoded) })
        } catch {
            // Kept in memory; peers send them again after a restart.
            logger.warning("could not keep membership records", metadata: ["error": "\(error)"])
        }
    }
}
