import SweeperCrypto
import SweeperMembership
import SweeperNet

/// Whom the peer node links: the circle's keys, the removed devices, and
/// the invitations whose handshake a member accepts.
extension CircleMembers {
    /// Whom the peer node links, and with which keys.
    struct LinkPolicy: Sendable {
        /// The key handshakes prove and mDNS announces.
        var current: CircleKey
        /// Earlier keys, accepted from members that missed a new one.
        var earlier: [CircleKey]
        /// Removed devices: never linked.
        var refused: Set<PeerID>
        /// Once the circle's key has changed, only its members are linked
        /// (holding an old key makes nobody a member); `nil` before.
        var members: Set<PeerID>?
        /// The circle's invitations (of each maker its newest
        /// ``CircleMembers/invitationsPerMaker``) and the key a joining
        /// device's handshake proves for each.
        var invitations: [PeerID: CircleKey]
    }

    /// Whom the peer node links now.
    var linkPolicy: LinkPolicy {
        let (current, earlier) = keys
        let view = view
        var invitations: [PeerID: CircleKey] = [:]
        for key in Self.accepted(view.invitations.values.map { ($0.key, $0.madeBy, $0.madeMillis) }) {
            invitations[key] = InvitationSecret.handshakeKey(for: key)
        }
        return LinkPolicy(
            current: current, earlier: earlier, refused: Set(view.removed.keys), members: view.epochs.isEmpty ? nil : Set(view.members.keys),
            invitations: invitations)
    }

    /// How many invitations of one maker a member accepts the handshake of.
    static let invitationsPerMaker = 16

    /// The invitations whose handshake this member accepts: of each maker,
    /// its newest ``invitationsPerMaker`` by the time it gave them. A
    /// maker's clock orders only its own invitations, so a member in bad
    /// faith that dates its invitations far ahead crowds out nobody
    /// else's (ordered over the whole circle, it would push every other
    /// member's out of reach).
    static func accepted(_ invitations: [(key: PeerID, madeBy: PeerID, madeMillis: UInt64)]) -> [PeerID] {
        Dictionary(grouping: invitations, by: \.madeBy).values.flatMap { own in
            own.sorted { ($0.madeMillis, $0.key) > ($1.madeMillis, $1.key) }.prefix(invitationsPerMaker).map(\.key)
        }.sorted()
    }
}
