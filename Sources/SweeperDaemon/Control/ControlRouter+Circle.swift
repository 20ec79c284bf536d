import FoundationEssentials
import SweeperControl
import SweeperConventions
import SweeperCrypto
import SweeperGame
import SweeperMembership
import SweeperSync

extension ControlRouter {
    /// The circle for `circle`: its members with names and when each was
    /// last heard from, then the removed devices.
    func circle() async -> Commands.Circle.Result {
        let view = members.view
        let me = signer.peerID
        let peers = Dictionary(await network.peers(all: false).map { ($0.snapshot.id.description, views.peer($0)) }, uniquingKeysWith: { a, _ in a })
        // Peers not seen since this daemon started: when the store last saw them.
        let stored = Dictionary(
            ((try? store.peers()) ?? []).map { ($0.peerID, $0.lastSeen.millisAt) },
            uniquingKeysWith: { a, _ in a })
        func named(_ peer: PeerID) -> String? { peer == me ? book.name(of: me) ?? name : book.name(of: peer) }
        let overQuota = await service.replica.overDailyQuota
        let listed = view.members.values.map { m in
            let info = peers[m.peer.description]
            let invitedBy = m.invitation.flatMap { view.invitations[$0]?.madeBy } ?? m.admittedBy
            var member = CircleMember(
                peer: m.peer.description, name: named(m.peer) ?? m.name, thisDevice: m.peer == me, founder: m.role == .founder,
                role: m.role.description, admittedByPeer: m.admittedBy?.description, admittedByName: m.admittedBy.flatMap(named),
                invitedByPeer: invitedBy?.description, invitedByName: invitedBy.flatMap(named), equivocatedPlaces: view.equivocations[m.peer],
                invitationsOffByPeer: m.invitationsOffBy?.description, invitationsOffByName: m.invitationsOffBy.flatMap(named),
                joinedAt: m.joinedMillis,
                linked: info?.state == .connected, lastSeenAt: m.peer == me ? nil : info?.lastSeenAt ?? stored[m.peer.description])
            member.hostedByPeer = m.hostedBy?.description
            member.hostedByName = m.hostedBy.flatMap(named)
            if overQuota.contains(m.peer) { member.overDailyQuota = true }
            // A player hosted here is seen whenever this device is.
            if m.hostedBy == me { member.lastSeenAt = nil }
            return member
        }.sorted { a, b in a.thisDevice != b.thisDevice ? a.thisDevice : (a.name, a.peer) < (b.name, b.peer) }
        func removal(_ r: MembershipView.Removal) -> RemovedDevice {
            RemovedDevice(
                peer: r.peer.description, name: named(r.peer) ?? "", removedByPeer: r.removedBy.description, removedByName: named(r.removedBy),
                removedAt: r.removedMillis, equivocatedPlaces: view.equivocations[r.peer])
        }
        let removed = view.removed.values.map(removal).sorted { $0.removedAt > $1.removedAt }
        return Commands.Circle.Result(members: listed, removed: removed, removedHere: view.removed[me].map(removal))
    }
}

extension ControlRouter {
    /// Removes a member named by player name or peer id (or a unique start
    /// of it), keeping the moves of it this device holds; the circle gets a
    /// new key, sealed to every other member.
    ///
    /// With `check`, only says whether this device may, and what would go.
    func removeDevice(_ text: String, check: Bool = false) async throws -> Commands.CircleRemove.Result {
        let view = members.view
        let peer: PeerID
        do {
            peer = try device(named: text, among: view.members.keys.filter { $0 != signer.peerID })
        } catch let error as ControlError {
            if view.isRemoved(signer.peerID) { throw ControlError(code: "not-a-member", message: Self.notAMember) }
            throw error
        }
        // Whether this device may, before anything goes (the players it hosts first).
        if let why = members.removalRefusal(of: peer) { throw Self.authorityError(.refused(why)) }
        let hosting = view.members.values.filter({ $0.hostedBy == peer }).map(\.peer).sorted()
        if check {
            let kept = await service.heldOps(of: peer)
            let names = hosting.map { book.name(of: $0) ?? $0.shortDescription }.sorted()
            return Commands.CircleRemove.Result(
                peer: peer.description, name: book.name(of: peer) ?? view.members[peer]?.name ?? "",
                keptOps: kept.values.reduce(0) { $0 + Int($1) }, circleTag: members.keys.current.tag, hostedRemovedNames: names.isEmpty ? nil : names)
        }
        // The players the device hosts go with it: it keeps their keys. They
        // go first, while their host is a member (no new key for each).
        var hostedRemoved: [String] = []
        for hostedPlayer in hosting {
            let kept = await service.heldOps(of: hostedPlayer)
            if (try? await members.offLoop { try members.remove(hostedPlayer, kept: kept) }) != nil {
                hostedRemoved.append(book.name(of: hostedPlayer) ?? hostedPlayer.shortDescription)
            }
        }
        let kept = await service.heldOps(of: peer)
        do {
            _ = try await members.offLoop { () throws(CircleMembers.AuthorityError) in try members.remove(peer, kept: kept) }
        } catch {
            throw Self.authorityError(error)
        }
        return Commands.CircleRemove.Result(
            peer: peer.description, name: book.name(of: peer) ?? view.members[peer]?.name ?? "",
            keptOps: kept.values.reduce(0) { $0 + Int($1) }, circleTag: members.keys.current.tag,
            hostedRemovedNames: hostedRemoved.isEmpty ? nil : hostedRemoved.sorted())
    }

    /// Names a member (by player name or peer id) an admin.
    func promoteDevice(_ text: String) async throws -> Commands.CircleAdmin.Result {
        let (peer, name) = try await changeMember(text) { peer throws(CircleMembers.AuthorityError) in try members.promote(peer) }
        return Commands.CircleAdmin.Result(peer: peer.description, name: name)
    }

    /// Turns a member's invitations (by player name or peer id) off or on again.
    func switchInvitations(of text: String, allowed: Bool) async throws -> Commands.CircleInvitations.Result {
        let (peer, name) = try await changeMember(text) { peer throws(CircleMembers.AuthorityError) in
            try members.switchInvitations(of: peer, allowed: allowed)
        }
        return Commands.CircleInvitations.Result(peer: peer.description, name: name, allowed: members.view.members[peer]?.invites ?? false)
    }

    /// Makes a change to another member named by `text` (player name or
    /// peer id) with `make`, its refusals worded for the control socket.
    /// Returns the member and its name.
    private func changeMember(
        _ text: String, _ make: @escaping @Sendable (PeerID) throws(CircleMembers.AuthorityError) -> MembershipRecord
    ) async throws -> (PeerID, String) {
        let view = members.view
        if view.isRemoved(signer.peerID) { throw ControlError(code: "not-a-member", message: Self.notAMember) }
        let peer = try device(named: text, among: view.members.keys.filter { $0 != signer.peerID })
        do {
            _ = try await members.offLoop { () throws(CircleMembers.AuthorityError) in try make(peer) }
        } catch {
            throw Self.authorityError(error)
        }
        return (peer, book.name(of: peer) ?? view.members[peer]?.name ?? "")
    }

    /// The control error for an invitation this device may not make.
    static func invitationsOff(by peer: PeerID, name: String?) -> ControlError {
        ControlError(
            code: "not-allowed",
            message: "\(name.map { "\($0) (\(peer.shortDescription))" } ?? peer.shortDescription) turned this device's invitations off; ask an admin to invite")
    }

    /// The control error for a change the circle's rules refused.
    static func authorityError(_ error: CircleMembers.AuthorityError) -> ControlError {
        switch error {
        case .refused(.notAMember): ControlError(code: "not-a-member", message: notAMember)
        case .refused(.thisDevice): ControlError.badArguments("a device cannot remove itself")
        case .refused(let why): ControlError(code: "not-allowed", message: why.description)
        case .record(let why): ControlError(code: "record-refused", message: "the circle refused the record: \(why)")
        }
    }
}

extension ControlRouter {
    /// The device of `candidates` that `text` names: by its name (any
    /// case), else by its peer id or the start of it (hyphens and case
    /// aside). Errors say which devices there are.
    func device(named text: String, among candidates: [PeerID]) throws -> PeerID {
        let view = members.view
        func named(_ peer: PeerID) -> String { book.name(of: peer) ?? view.members[peer]?.name ?? "" }
        let wanted = text.trimmedOfWhitespace
        let byName = candidates.filter { named($0).equalsIgnoringCase(wanted) }
        let squeezed = wanted.uppercased().filter { $0 != "-" }
        let byID = candidates.filter { !squeezed.isEmpty && $0.description.filter { $0 != "-" }.hasPrefix(squeezed) }
        let matches = byName.isEmpty ? byID : byName
        guard matches.count == 1, let peer = matches.first else {
            let names = candidates.sorted().map { "\(named($0).nonEmpty ?? "?") \($0.shortDescription)" }
            throw ControlError(
                code: matches.isEmpty ? "unknown-device" : "ambiguous-device",
                message: matches.isEmpty
                    ? "no \(candidates.contains(signer.peerID) ? "" : "other ")device of the circle is '\(wanted)' (members: \(names.isEmpty ? "none" : names.joined(separator: ", ")))"
                    : "'\(wanted)' names \(matches.count) devices; give more of the peer id")
        }
        return peer
    }

    /// The devices a `new` or `add-players` request names: each a member
    /// of the circle by name or id, or any full peer id (a device that has
    /// yet to join).
    func players(named texts: [String]) throws -> Set<PeerID> {
        guard !texts.isEmpty else { throw ControlError.badArguments("name at least one player (or leave players out: every member plays)") }
        guard texts.count <= Genesis.playerLimit else {
            throw ControlError.badArguments("at most \(Genesis.playerLimit) players")
        }
        let members = Array(self.members.view.members.keys)
        var out = Set<PeerID>()
        for text in texts {
            if let full = try? PeerID(parsing: text) { out.insert(full) } else { out.insert(try device(named: text, among: members)) }
        }
        return out
    }
}

extension String {
    /// The string, or nil when empty.
    var nonEmpty: String? { isEmpty ? nil : self }
}

extension ControlRouter {
    /// Why a device that is not a member of its circle cannot change it.
    static let notAMember =
        "this device is not a member of its circle: it was removed (see sweeper circle); ask an admin for a new invite"
}
