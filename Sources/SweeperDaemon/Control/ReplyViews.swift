import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SweeperControl
import SweeperConventions
import SweeperCrypto
import SweeperGame
import SweeperMembership
import SweeperSync

/// How the daemon shows a game in answers and events: its summary, its
/// full view, its players with their names and scores, the wrong flags
/// after a loss, and the cells a change touched. Pure functions of a game's
/// replica and state, with players' names from the peer book.
struct ReplyViews: Sendable {
    /// The player answered for (this daemon's own, or one it hosts), shown by its own name.
    var ownID: PeerID
    /// That player's name.
    var ownName: String
    /// Other players' names.
    let peers: PeerBook
    /// The circle's members: two of one name are told apart.
    let members: CircleMembers
    /// The links, which know the games of circles this device left.
    let links: LinkRegistry
    /// The games' played time.
    let play: PlayClock
    /// The daemon's clock: what a race's running time and an invitation's expiry are read by.
    let clock: any DaemonClock

    /// Players: every author of an op in the game, creator first.
    func players(_ replica: GameReplica, _ state: GameState) -> [PeerID] {
        players(creator: state.creator, authors: replica.authors)
    }

    /// `creator`, then every other of `authors`.
    func players(creator: PeerID, authors: [PeerID]) -> [PeerID] {
        [creator] + authors.filter { $0 != creator }
    }

    /// How `games --available` shows a game that linked peers hold: what
    /// a peer described of it, in the words of `games`.
    func available(_ game: GameElsewhere) -> AvailableGame {
        var out = AvailableGame(
            game: game.id.description, ops: Int(clamping: game.ops), playerCount: game.players.count, heldByPeers: game.heldBy.map(\.peer.description), heldByNames: game.heldBy.map(\.name),
            forgotten: game.forgotten)
        // Creator first, when a description names it; then by name.
        let creator = game.listing?.creator
        let others = game.players.filter { $0 != creator }.map(name(of:)).sorted()
        out.playerNames = (creator.map { [name(of: $0)] } ?? []) + others
        guard let listing = game.listing else { return out }
        let p = listing.parameters
        out.width = p.width
        out.height = p.height
        out.mines = p.mines
        out.noGuess = p.noGuess
        out.creatorName = name(of: listing.creator)
        out.createdAt = Int64(clamping: listing.createdAtMillis)
        out.status = listing.status.shown
        out.progress = Double(listing.progressPermille) / 1000
        out.chosenPlayerNames = listing.players.map { [name(of: listing.creator)] + $0.subtracting([listing.creator]).map(name(of:)).sorted() }
        return out
    }

    /// The summary `games` lists and `game-added` carries.
    func summary(_ replica: GameReplica, _ state: GameState) -> GameSummary {
        summary(GameOverview(state, authors: replica.authors, reader: ownID))
    }

    /// The summary of a game from its overview: what `games` lists of a
    /// sleeping game without waking it, the same as of one awake.
    func summary(_ game: GameOverview) -> GameSummary {
        let p = game.parameters
        var summary = GameSummary(
            game: game.gameID.description, width: p.width, height: p.height, mines: p.mines, status: game.status.shown,
            // A race lists this device's own board's progress (or the creator's).
            progress: game.progress, elapsedMillis: Int(clamping: play.playedMillis(game.gameID, startMillis: game.startMillis, endMillis: game.endMillis)),
            playerNames: players(creator: game.creator, authors: game.authors).map(name(of:)), createdAt: Int64(clamping: game.startMillis),
            endedAt: game.endMillis.map { Int64(clamping: $0) }, assisted: game.isAssisted,
            chosenPlayerNames: chosenPlayers(game.players, creator: game.creator),
            watching: game.mayMove(ownID) ? nil : true, archived: game.isArchived ? true : nil,
            privateGame: game.isPrivate ? true : nil, onlyHere: links.withholds(game.gameID) ? true : nil, race: game.isRace ? true : nil)
        summary.noGuess = p.noGuess ? true : nil
        summary.day = game.dailyDay.map(DailyBoard.date(of:))
        summary.seeded = game.isSeeded ? true : nil
        return summary
    }

    /// The names of the devices the creator chose to move (creator first,
    /// then by name), or `nil` when every member may.
    func chosenPlayers(_ state: GameState) -> [String]? {
        chosenPlayers(state.players, creator: state.creator)
    }

    /// The names of `players` (creator first, then by name), or `nil` when every member may.
    func chosenPlayers(_ players: Set<PeerID>?, creator: PeerID) -> [String]? {
        guard let players else { return nil }
        return [name(of: creator)] + players.subtracting([creator]).map(name(of:)).sorted()
    }

    /// The whole game, as `show` and `new` answer; with `cheat`, the mines too.
    /// `games`: every game held, when the caller has them, to say whether
    /// a finished game set a record.
    /// In a race the view is of one racer's board: `racer`'s, else this
    /// device's own, else (for a spectator) the creator's.
    func view(_ replica: GameReplica, _ whole: GameState, cheat: Bool = false, games: [(GameReplica, GameState)]? = nil,
              racer: PeerID? = nil) -> GameView {
        let shownRacer = whole.racerShown(to: racer ?? ownID)
        let state = whole.shown(to: racer ?? ownID)
        let scores = whole.scores
        let letters = letters()
        let players = players(replica, whole).map { p -> PlayerScore in
            var score = PlayerScore(
                peer: p.description, name: name(of: p), score: scores[p] ?? 0,
                colour: peers.profile(of: p).flatMap { $0.colour > 0 ? Int($0.colour) : nil })
            score.letter = letters[p].map(String.init)
            return score
        }.sorted { ($1.score, $0.name) < ($0.score, $1.name) }
        let p = state.genesis.parameters
        var view = GameView(
            game: state.gameID.description, width: p.width, height: p.height, mines: p.mines, status: state.status.shown,
            // After a win every mine shows flagged, and the count says so too.
            digest: whole.digestHex, revealed: state.revealedCount, flags: state.status == .won ? p.mines : state.board.flagCount, board: state.rows,
            players: players, trippedByPeer: state.trippedBy?.description,
            elapsedMillis: Int(clamping: whole.isRace ? state.elapsedMillis(nowMillis: clock.wallMillis) : play.playedMillis(state)),
            progress: state.board.progress,
            assisted: state.isAssisted, questionMarks: state.genesis.questionMarks, mineLayout: cheat ? state.layoutRows : nil,
            wrongFlags: state.status == .lost ? Self.wrongFlags(state) : nil,
            createdAt: Int64(clamping: state.startMillis), endedAt: state.endMillis.map { Int64(clamping: $0) },
            chosenPlayerNames: chosenPlayers(whole), watching: whole.mayMove(ownID) ? nil : true,
            archived: whole.isArchived ? true : nil, privateGame: whole.isPrivate ? true : nil,
            equivocatedByNames: replica.equivocators.isEmpty ? nil : replica.equivocators.sorted().map(name(of:)),
            onlyHere: links.withholds(state.gameID) ? true : nil,
            start: CellPosition(x: p.start.x, y: p.start.y))
        view.overQuotaByNames = replica.overQuota.isEmpty ? nil : replica.overQuota.sorted().map(name(of:))
        view.noGuess = p.noGuess ? true : nil
        view.seeded = state.isSeeded ? true : nil
        view.hints = state.hintsBy.isEmpty ? nil : hints(state)
        view.peeks = state.peeks.isEmpty ? nil : peeks(state)
        view.ending = ending(replica, state, racer: shownRacer, games: games)
        if let shownRacer { view.race = raceTable(whole, shown: shownRacer) }
        return view
    }

    /// A race as it stands, showing `shown`'s board. A racer that is no
    /// member of the circle (removed since, or a key a creator in bad faith
    /// named) moves no more: the race is over without it. So is a racer
    /// that never moved once every racer that did has ended and one of
    /// them cleared the board: it did not start, and it could no longer
    /// win (its clock runs from the race's start, past the winner's end),
    /// so the race does not wait for it.
    func raceTable(_ race: GameState, shown: PeerID) -> Commands.RaceTable {
        let members = members.view.members
        let ended = { (r: PeerID) in race.lane(of: r).map { $0.status != .playing } ?? true || members[r] == nil }
        let unmoved = { (r: PeerID) in race.lane(of: r).map { $0.status == .playing && $0.scores[r] == nil && $0.board.flagCount == 0 } ?? false }
        let cleared = race.racers.contains { r in race.lane(of: r)?.status == .won }
        let over = race.racers.allSatisfy(ended) || (cleared && race.racers.allSatisfy { ended($0) || unmoved($0) })
        let racers = race.racers.compactMap { r in
            race.lane(of: r).map { lane in
                var s = standing(of: r, on: lane)
                s.didNotStart = over && unmoved(r) ? true : nil
                return s
            }
        }
        return Commands.RaceTable(
            shownPeer: shown.description, racers: Commands.RaceTable.ordered(racers),
            winnerName: over ? race.raceWinner.map(name(of:)) : nil, over: over ? true : nil)
    }

    /// How one racer's board stands.
    func standing(of racer: PeerID, on lane: GameState) -> Commands.RacerStanding {
        Commands.RacerStanding(
            peer: racer.description, name: name(of: racer), colour: peers.profile(of: racer).flatMap { $0.colour > 0 ? Int($0.colour) : nil },
            status: lane.status.shown, gaveUp: lane.gaveUpMillis != nil && lane.board.status == .playing ? true : nil,
            progress: lane.board.progress, flags: lane.board.flagCount,
            playedMillis: lane.endMillis.map { Int(clamping: $0 - min($0, lane.startMillis)) }, assisted: lane.isAssisted ? true : nil)
    }

    /// After a loss, the flags on cells without a mine.
    static func wrongFlags(_ state: GameState) -> [CellPosition] {
        let g = state.genesis.geometry
        return (0..<g.cellCount).filter { state.board.mark(at: $0) == .flag && !state.genesis.layout.isMine($0) }.map {
            let c = g.cell(at: $0)
            return CellPosition(x: c.x, y: c.y)
        }
    }

    /// The cells of `cells` (indices, from ``GameState/changedCells(by:before:)``)
    /// as they look in `state` now.
    static func cellChanges(_ cells: [Int], in state: GameState) -> [CellChange] {
        let g = state.genesis.geometry
        return cells.map { i in
            let c = g.cell(at: i)
            return CellChange(x: c.x, y: c.y, value: String(state.look(i)))
        }
    }

    /// A move's answer: the cells it changed, and the game after it.
    func moveResult(_ outcome: MoveOutcome) -> Commands.MoveResult {
        let state = outcome.state
        return Commands.MoveResult(
            game: state.gameID.description, changed: Self.cellChanges(outcome.cells, in: state), status: state.status.shown,
            progress: state.board.progress, trippedByPeer: state.trippedBy?.description, trippedByName: state.trippedBy.map(name(of:)))
    }
}

extension GameState {
    /// The look of one cell, as in the `board` rows of `show`.
    func look(_ i: Int) -> Character {
        let layout = genesis.layout
        let over = status != .playing
        if board.isRevealed(i) {
            if layout.isMine(i) { return i == trippedMine ? "X" : "*" }
            let n = layout.adjacentMines(i)
            return n == 0 ? "." : Character(String(n))
        }
        // After a win every mine is shown flagged; after a loss, shown.
        let shownMine: Character = status == .won ? "F" : "*"
        switch board.mark(at: i) {
        case .flag: return "F"
        case .question: return over && layout.isMine(i) ? shownMine : "?"
        case .none: return over && layout.isMine(i) ? shownMine : "#"
        }
    }

    /// The board rows.
    var rows: [String] {
        let g = genesis.geometry
        return (0..<g.height).map { y in String((0..<g.width).map { look(g.index(x: $0, y: y)) }) }
    }

    /// The mine layout rows (`.` and `*`).
    var layoutRows: [String] {
        let g = genesis.geometry
        return (0..<g.height).map { y in String((0..<g.width).map { genesis.layout.isMine(g.index(x: $0, y: y)) ? "*" : "." }) }
    }

    /// Revealed cells (mines included).
    var revealedCount: Int { (0..<genesis.geometry.cellCount).reduce(0) { $0 + (board.isRevealed($1) ? 1 : 0) } }

    /// Seconds from the start to the end, or to `now` while playing: the
    /// time of a game made before played time was kept.
    func elapsedSeconds(nowMillis: UInt64) -> Int { Int(elapsedMillis(nowMillis: nowMillis) / 1000) }

    /// ``elapsedSeconds(nowMillis:)`` to the millisecond.
    func elapsedMillis(nowMillis: UInt64) -> UInt64 {
        let end = endMillis ?? nowMillis
        return end > startMillis ? end - startMillis : 0
    }

    /// The digest as hex.
    var digestHex: String { Hex.encode(digest) }
}

extension Date {
    /// Milliseconds since 1970.
    var millis: UInt64 { UInt64(max(0, timeIntervalSince1970 * 1000)) }
    /// Milliseconds since 1970, as an answer's instant (`…At`).
    var millisAt: Int64 { Int64(max(0, timeIntervalSince1970 * 1000)) }
}

extension GameStatus {
    /// How the control protocol says it.
    var shown: PlayStatus {
        switch self {
        case .playing: .playing
        case .won: .won
        case .lost: .lost
        }
    }
}

extension ControlRouter {
    /// The circle for `circle`: its members with names and when each was
    /// last heard from, then the removed devices.
    func circle() async -> Commands.Circle.Result {
        let view = members.view
        let me = signer.peerID
        let peers = Dictionary(await network.peers(all: false).map { ($0.snapshot.id.description, views.peer($0)) }, uniquingKeysWith: { a, _ in a })
        // Peers not seen since this daemon started: when the store last saw them.
        let stored = Dictionary(((try? store.peers()) ?? []).map { ($0.peerID, $0.lastSeen.millisAt) },
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
            if (try? members.remove(hostedPlayer, kept: await service.heldOps(of: hostedPlayer))) != nil {
                hostedRemoved.append(book.name(of: hostedPlayer) ?? hostedPlayer.shortDescription)
            }
        }
        let kept = await service.heldOps(of: peer)
        do {
            _ = try members.remove(peer, kept: kept)
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
        let (peer, name) = try changeMember(text) { peer throws(CircleMembers.AuthorityError) in try members.promote(peer) }
        return Commands.CircleAdmin.Result(peer: peer.description, name: name)
    }

    /// Turns a member's invitations (by player name or peer id) off or on again.
    func switchInvitations(of text: String, allowed: Bool) async throws -> Commands.CircleInvitations.Result {
        let (peer, name) = try changeMember(text) { peer throws(CircleMembers.AuthorityError) in
            try members.switchInvitations(of: peer, allowed: allowed)
        }
        return Commands.CircleInvitations.Result(peer: peer.description, name: name, allowed: members.view.members[peer]?.invites ?? false)
    }

    /// Makes a change to another member named by `text` (player name or
    /// peer id) with `make`, its refusals worded for the control socket.
    /// Returns the member and its name.
    private func changeMember(
        _ text: String, _ make: (PeerID) throws(CircleMembers.AuthorityError) -> MembershipRecord
    ) throws -> (PeerID, String) {
        let view = members.view
        if view.isRemoved(signer.peerID) { throw ControlError(code: "not-a-member", message: Self.notAMember) }
        let peer = try device(named: text, among: view.members.keys.filter { $0 != signer.peerID })
        do {
            _ = try make(peer)
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

    // MARK: Invitations and joining

    /// Makes a single-use invitation and its code; the peer node takes its
    /// handshake key before the code is shown, so it works at once.
    func invite(validFor lifetime: Duration) async throws -> Commands.Invite.Result {
        let made: (secret: InvitationSecret, expiresMillis: UInt64)
        do {
            made = try members.invite(for: lifetime)
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
    func revokeInvitation(_ text: String) throws -> InvitationInfo {
        var named = text
        if let secret = (try? InviteCode.read(text))?.secret { named = secret.identity.peerID.description }
        let wanted = named.uppercased().filter { $0 != "-" && !$0.isWhitespace }
        let all = invitations()
        let matches = all.filter { !wanted.isEmpty && $0.invitation.filter { $0 != "-" }.hasPrefix(wanted) }
        guard matches.count == 1, let match = matches.first, let key = try? PeerID(parsing: match.invitation) else {
            throw ControlError(
                code: matches.isEmpty ? "unknown-invitation" : "ambiguous-invitation",
                message: matches.isEmpty ? "no invitation is '\(text)' (see sweeper invite --list)" : "'\(text)' names \(matches.count) invitations; give more of its id")
        }
        do {
            try members.revoke(key)
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
                message: "that code carries a circle key (a release before invitations); a device joins only with an invitation a member makes: ask for a new code (sweeper invite)")
        case .invitation(let secret), .pinned(let secret, _):
            let root: [UInt8]? = if case .pinned(_, let root) = invite { root } else { nil }
            if members.view.invitations[secret.identity.peerID] != nil {
                throw ControlError(code: "already-member", message: "this device made that invitation: it is in that circle already")
            }
            switch await network.redeem(secret, address: address, waiting: .milliseconds(Int(wait * 1000))) {
            case .admitted(let member, let messages, let keys):
                let first: CircleKey
                do {
                    first = try members.adopt(records: PeerNetwork.membershipRecords(messages), keys: keys, root: root)
                } catch {
                    throw ControlError(code: "invite-refused", message: "could not join: \(error)")
                }
                let games = try await circleChanges.joined(first, forgetGames: forget)
                // A member reached by its address (no mDNS) stays a peer: dialled from now on, as `connect` does.
                if let address { await network.connect(address) }
                let tag = members.linkPolicy.current.tag
                logger.notice("joined a circle", metadata: ["circle": "\(tag)", "admittedBy": "\(member.shortDescription)"])
                return result(tag, admittedBy: member.description, games: games)
            case .refused(_, let why):
                throw ControlError(code: "invite-refused", message: "\(why)")
            case .noAnswer(let tried):
                let waited = address == nil && wait > 0 ? " in \(Int(wait)) s" : ""
                throw ControlError(
                    code: "no-member",
                    message: "no member of the invitation's circle answered\(waited) (\(tried) address\(tried == 1 ? "" : "es") tried); start the daemon of the member that made the code on this network, or give its address with --address HOST:PORT")
            }
        }
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
