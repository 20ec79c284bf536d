import FoundationEssentials
import SweeperControl
import SweeperConventions
import SweeperCrypto
import SweeperGame
import SweeperMembership
import SweeperSync

/// Invitations: making, listing and revoking them, and joining a circle
/// with one.
extension ControlRouter {
    /// Makes a single-use invitation and its code; the peer node takes its
    /// handshake key before the code is shown, so it works at once.
    func invite(validFor lifetime: Duration) async throws -> Commands.Invite.Result {
        let made: (secret: InvitationSecret, expiresMillis: UInt64)
        do {
            made = try await members.offLoop { try members.invite(for: lifetime) }
        } catch CircleMembers.MembershipError.removedHere {
            throw ControlError(code: "not-a-member", message: Self.notAMember)
        } catch CircleMembers.MembershipError.refused(let why) {
            throw ControlError(code: "record-refused", message: "the circle refused the invitation: \(why); revoke unused ones (sweeper invite --list)")
        } catch CircleMembers.MembershipError.invitationsOff(let by) {
            throw Self.invitationsOff(by: by, name: book.name(of: by))
        }
        await circleChanges.membershipChanged()
        return Commands.Invite.Result(
            code: code(for: made.secret), circleTag: members.keys.current.tag, invitation: made.secret.identity.peerID.description,
            expiresAt: made.expiresMillis)
    }

    /// The circle's invitations, newest first, with the codes of open ones made here.
    func invitations() -> [InvitationInfo] {
        let now = views.clock.wallMillis
        let view = members.view
        let secrets = members.secrets
        func named(_ peer: PeerID) -> String? { book.name(of: peer) ?? view.members[peer]?.name.nonEmpty }
        return view.invitations.values.sorted { $0.madeMillis > $1.madeMillis }.map { i in
            let state: InvitationInfo.State
            var usedBy: PeerID?
            switch i.state {
            case .used(let by):
                state = .used
                usedBy = by
            case .revoked: state = .revoked
            case .open: state = i.expiresMillis > now ? .open : .expired
            }
            return InvitationInfo(
                invitation: i.key.description, madeByPeer: i.madeBy.description, madeByName: named(i.madeBy), madeAt: i.madeMillis,
                expiresAt: i.expiresMillis, state: state, usedByPeer: usedBy?.description, usedByName: usedBy.flatMap(named),
                code: state == .open ? secrets[i.key].map(code(for:)) : nil)
        }
    }

    /// Revokes the open invitation whose id starts with `text`, or whose
    /// invite code `text` is (the code its maker holds names it too).
    func revokeInvitation(_ text: String) async throws -> InvitationInfo {
        var named = text
        if let secret = (try? InviteCode.read(text))?.secret { named = secret.identity.peerID.description }
        let wanted = named.uppercased().filter { $0 != "-" && !$0.isWhitespace }
        let all = invitations()
        let matches = all.filter { !wanted.isEmpty && $0.invitation.filter { $0 != "-" }.hasPrefix(wanted) }
        guard matches.count == 1, let match = matches.first, let key = try? PeerID(parsing: match.invitation) else {
            throw ControlError(
                code: matches.isEmpty ? "unknown-invitation" : "ambiguous-invitation",
                message: matches.isEmpty
                    ? "no invitation is '\(text)' (see sweeper invite --list)" : "'\(text)' names \(matches.count) invitations; give more of its id")
        }
        do {
            try await members.offLoop { () throws(CircleMembers.MembershipError) in try members.revoke(key) }
        } catch {
            switch error {
            case .removedHere: throw ControlError(code: "not-a-member", message: Self.notAMember)
            case .unknownInvitation: throw ControlError(code: "unknown-invitation", message: "no invitation is '\(text)'")
            case .invitationClosed: throw ControlError(code: "invitation-closed", message: "that invitation is \(match.state.rawValue) already")
            case .notYours: throw ControlError(code: "not-allowed", message: "only the invitation's maker or an admin may revoke it")
            case .invitationsOff(let by): throw Self.invitationsOff(by: by, name: book.name(of: by))
            case .refused(let why): throw ControlError(code: "record-refused", message: "the circle refused the revocation: \(why)")
            }
        }
        return invitations().first { $0.invitation == match.invitation } ?? match
    }

    /// The code of an invitation made here: it names the circle's root,
    /// so that the joining device takes only records rooted there.
    func code(for secret: InvitationSecret) -> String {
        guard let root = members.rootCommitment else { return InviteCode.encode(secret) }
        return InviteCode.encode(secret, root: root)
    }

    /// Joins the circle of an invite code: a single-use invitation is
    /// redeemed with a member (at `address`, else any daemon mDNS sees);
    /// a code of an earlier release carries the circle key itself.
    func join(_ a: Commands.Join.Arguments) async throws -> Commands.Join.Result {
        let invite: Invite
        do {
            invite = try InviteCode.read(a.code)
        } catch {
            throw ControlError(code: "bad-invite", message: "that invite code is wrong: \(error)")
        }
        var address: HostPort?
        if let text = a.address {
            guard let parsed = HostPort(text) else { throw ControlError.badArguments("address must be HOST:PORT (IPv6 in brackets), not '\(text)'") }
            address = parsed
        }
        let forget = a.oldGames == .forget
        let wait = a.waitSeconds ?? 15
        guard wait.isFinite, (0...600).contains(wait) else { throw ControlError.badArguments("waitSeconds must be 0 to 600, not \(wait)") }
        func result(_ tag: String, admittedBy: String? = nil, games: Int) -> Commands.Join.Result {
            Commands.Join.Result(
                circleTag: tag, admittedByPeer: admittedBy, keptGameCount: forget ? nil : games, forgottenGameCount: forget ? games : nil)
        }
        switch invite {
        case .circleKey:
            throw ControlError(
                code: "old-code",
                message:
                    "that code carries a circle key (a release before invitations); a device joins only with an invitation a member makes: ask for a new code (sweeper invite)"
            )
        case .invitation(let secret), .pinned(let secret, _):
            let root: [UInt8]? = if case .pinned(_, let root) = invite { root } else { nil }
            if members.view.invitations[secret.identity.peerID] != nil {
                throw ControlError(code: "already-member", message: "this device made that invitation: it is in that circle already")
            }
            switch await network.redeem(secret, address: address, waiting: .milliseconds(Int(wait * 1000))) {
            case .admitted(let member, let messages, let keys):
                let first: CircleKey
                do {
                    let records = PeerNetwork.membershipRecords(messages)
                    first = try await members.offLoop { try members.adopt(records: records, keys: keys, root: root) }
                } catch {
                    throw ControlError(code: "invite-refused", message: "could not join: \(error)")
                }
                let games = try await circleChanges.joined(first, forgetGames: forget)
                // A member reached by its address (no mDNS) stays a peer: dialled from now on, as `connect` does,
                // and after a restart: remembered now, not only once a link to it says hello (a daemon
                // stopped at once would otherwise know no address of its circle in a house mDNS does not reach).
                if let address {
                    book.remember(member, name: "", address: address.description)
                    await network.connect(address)
                }
                let tag = members.linkPolicy.current.tag
                logger.notice("joined a circle", metadata: ["circle": "\(tag)", "admittedBy": "\(member.shortDescription)"])
                return result(tag, admittedBy: member.description, games: games)
            case .refused(_, let why):
                throw ControlError(code: "invite-refused", message: "\(why)")
            case .noAnswer(let tried):
                let waited = address == nil && wait > 0 ? " in \(Int(wait)) s" : ""
                throw ControlError(
                    code: "no-member",
                    message:
                        "no member of the invitation's circle answered\(waited) (\(tried) address\(tried == 1 ? "" : "es") tried); start the daemon of the member that made the code on this network, or give its address with --address HOST:PORT"
                )
            }
        }
    }
}
