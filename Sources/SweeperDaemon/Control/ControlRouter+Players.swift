import FoundationEssentials
import SweeperControl
import SweeperConventions
import SweeperCrypto
import SweeperMembership
import SweeperMessages
import SweeperWeb

extension ControlRouter {
    /// The router answering for the player a browser plays as: `id` (a
    /// hosted player's id, as the web board keeps it), or this daemon's own
    /// player when nil. Nil when `id` names no player hosted here (removed
    /// since the browser paired): such a browser gets nothing.
    func acting(as id: String?) -> ControlRouter? {
        guard let id else { return self }
        guard let peer = try? PeerID(parsing: id), let hostedPlayer = hosted.player(peer) else { return nil }
        var router = self
        router.player = hostedPlayer.identity
        router.views.ownID = peer
        router.views.ownName = book.name(of: peer) ?? hostedPlayer.name
        return router
    }

    /// The answer to a line from a browser whose hosted player is gone.
    static func playerGone(_ line: Data) -> Data {
        let head = line.withUnsafeBytes { JSONLineReader.value($0)?.object }.flatMap(RequestHead.init(members:))
        return
            (try? ControlCoding.line(
                Answer<Empty>.failure(head?.id, ControlError(code: "not-a-member", message: "this browser's player is no longer hosted here")))) ?? Data()
    }

    /// Answers the hosted players' commands: add, pair, list, remove.
    func playerCommand(_ command: String, _ id: RequestID?, _ line: Data) async throws -> ControlReply {
        switch command {
        case Commands.PlayerAdd.name:
            let a: Commands.PlayerAdd.Arguments = try args(line)
            return try answer(id, try await addPlayer(a))
        case Commands.PlayerPair.name:
            let a: Commands.PlayerPair.Arguments = try args(line)
            guard let player = hosted.player(named: a.player) else { throw ControlError.unknownPlayer(a.player) }
            return try answer(id, try pairing(for: player))
        case Commands.PlayerList.name:
            return try answer(id, Commands.PlayerList.Result(players: hosted.all.map(info)))
        default:
            let a: Commands.PlayerRemove.Arguments = try args(line)
            return try answer(id, try await removePlayer(a.player))
        }
    }

    private func info(_ player: HostedPlayer) -> HostedPlayerInfo {
        let colour = book.profile(of: player.id)?.colour ?? player.colour
        return HostedPlayerInfo(
            peer: player.id.description, name: book.name(of: player.id) ?? player.name, colourName: PlayerColours.name(of: Int(colour)),
            addedAt: Int64(player.addedMillis), member: members.view.isMember(player.id),
            devices: web.pairing.devices.filter { $0.player == player.id.description }.map(Self.info))
    }

    /// Makes a player with a key of its own, admits it to the circle as a
    /// device hosted here, signs its profile, and pairs one browser to it.
    private func addPlayer(_ a: Commands.PlayerAdd.Arguments) async throws -> PlayerPairing {
        try refuseIfRemoved()
        guard hostedPlayer == nil else { throw ControlError.notFromTheWeb(Commands.PlayerAdd.name) }
        guard hosted.all.count < HostedPlayers.limit else {
            throw ControlError.badArguments("this daemon hosts \(HostedPlayers.limit) players already; remove one first (sweeper player remove)")
        }
        // Every member is another device to the new player, this one included.
        let identity = SigningIdentity()
        let others = Array(members.view.members.keys)
        let clean = try checkedName(a.name, for: identity.peerID, among: others)
        let colour = try a.colour.map { try checkedColour($0, among: others) } ?? 0
        let player = HostedPlayer(identity: identity, name: clean, colour: colour, addedMillis: views.clock.wallMillis)
        // The key is kept before the circle hears of it: a player admitted
        // but not kept would be a member nobody can act as.
        do {
            try hosted.add(player)
        } catch {
            throw ControlError(code: "storage", message: "could not keep the player: \(error)")
        }
        let records: [MembershipRecord]
        do {
            records = try await members.offLoop { try members.host(identity.peerID, name: clean) }
        } catch {
            try? hosted.remove(identity.peerID)
            throw ControlError(code: "not-allowed", message: "this device cannot admit a player to the circle: \(error)")
        }
        // The admission reaches the peers before the profile, which they
        // take only from a member.
        await circleChanges.membershipChanged(made: records.map(\.encoded))
        await service.host(hosted.all.map(\.identity))
        gossip.broadcast(.profile(book.ownProfile(identity: identity, name: clean, colour: colour)))
        return try pairing(for: player)
    }

    /// A one-time pairing for a hosted player's browser: a code on the
    /// home network when the board is served there, else a login address
    /// on this computer.
    private func pairing(for player: HostedPlayer) throws -> PlayerPairing {
        let info = info(player)
        if case let .serving(port) = web.lan, let fingerprint = web.fingerprint {
            let (code, expires) = web.pairing.issueCode(player: player.id.description)
            let urls = Self.lanAddresses().map { "https://\($0):\(port)/?pair=\(code)" }
            let url = urls.first ?? "https://127.0.0.1:\(port)/?pair=\(code)"
            return PlayerPairing(player: info, url: url, code: code, urls: urls, fingerprint: fingerprint, expiresAt: expires)
        }
        guard let login = web.login(player: player.id.description) else {
            throw ControlError.webUnavailable("it is not served yet; try again in a moment")
        }
        return PlayerPairing(player: info, url: login.url, code: nil, urls: [], fingerprint: nil, expiresAt: login.expiresMillis)
    }

    /// Stops hosting a player: its browsers are logged out, its key is
    /// deleted, and it is removed from the circle when this device may
    /// remove devices. No new circle key is needed: the player's key never
    /// left this device, which stays a member.
    private func removePlayer(_ named: String) async throws -> Commands.PlayerRemove.Result {
        guard hostedPlayer == nil else { throw ControlError.notFromTheWeb(Commands.PlayerRemove.name) }
        guard let player = hosted.player(named: named) else { throw ControlError.unknownPlayer(named) }
        let id = player.id
        let name = book.name(of: id) ?? player.name
        let loggedOut = (try? web.logOut(player: id.description))?.count ?? 0
        var removed = false
        if members.view.isMember(id), members.view.removalRefusal(by: signer.peerID, of: id) == nil {
            let kept = await service.heldOps(of: id)
            removed = (try? await members.offLoop { try members.remove(id, kept: kept) }) != nil
        }
        do {
            try hosted.remove(id)
        } catch {
            throw ControlError(code: "storage", message: "could not forget the player's key: \(error)")
        }
        await service.host(hosted.all.map(\.identity))
        let message =
            removed
            ? "\(name) is removed from the circle and their key deleted; their browsers are logged out. No new circle key is needed: their key never left this device."
            : "\(name)'s key is deleted and their browsers are logged out, so nobody can play as them again; the circle still lists them until an admin removes them (sweeper circle remove \(id.shortDescription))."
        return Commands.PlayerRemove.Result(peer: id.description, name: name, removedFromCircle: removed, browsersLoggedOut: loggedOut, message: message)
    }
}
