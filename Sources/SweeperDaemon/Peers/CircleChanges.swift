import Logging
import SweeperCrypto

/// What a change of the circle's membership does to the rest of the
/// daemon, written once for every way it changes: the node takes the new
/// link policy (keys, removed devices, members, invitations), the games
/// drop what removed devices wrote after their removal and take new ops
/// from the members only, and records made
/// here go to every linked peer. `DaemonCore` runs it after each change
/// `CircleMembers` reports; the router runs it when this device joins
/// another circle and after it makes an invitation.
struct CircleChanges: Sendable {
    let members: CircleMembers
    let service: GameService
    let network: PeerNetwork
    let logger: Logger

    /// The membership changed (records came, or were made here: `made`).
    /// Once every part has taken it, the log says so ("circle changed").
    func membershipChanged(made: [[UInt8]] = []) async {
        // Records made here go out first, so that a device just removed
        // while linked hears of it before its link closes.
        if !made.isEmpty { network.inbox.send(membership: made) }
        await network.membershipChanged(members.linkPolicy)
        network.inbox.membersChanged()
        await service.applyRemovals(members.removals, readmitted: members.readmitted)
        await service.admitAuthors { [members] in members.opAuthors(holding: $0) }
        let view = members.view
        logger.info("circle changed", metadata: ["members": "\(view.members.count)", "removed": "\(view.removed.count)"])
    }

    /// This device joins the circle of `key`: the games move to it (those
    /// held before are kept, or forgotten with `forgetGames`), then
    /// `membersMoved` runs (when ``CircleMembers`` moves only now), then the
    /// new circle's removals apply and the node links in it. Returns how
    /// many games were kept or forgotten.
    func joined(_ key: CircleKey, forgetGames: Bool, membersMoved: @Sendable () -> Void = {}) async throws -> Int {
        let games = try await service.join(key, forgetGames: forgetGames)
        membersMoved()
        await network.circleChanged(to: members.linkPolicy.current)
        await membershipChanged()
        return games
    }
}
