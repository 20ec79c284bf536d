import FoundationEssentials
import Logging
import SweeperControl
import SweeperConventions
import SweeperCrypto
import SweeperGame
import SweeperMessages
import SweeperNet
import SweeperStore
import SweeperSync
import SweeperWeb

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The daemon's request router: the one place that reads a control
/// request, calls the game service or the peer network for it, and words
/// every failure as a ``ControlError``. It holds no state of its own.
///
/// It answers for one player: this daemon's own (the control socket, and
/// a browser of the device's owner), or a player it hosts (a browser
/// paired to them: ``acting(as:)``), whose key signs what they do.
struct ControlRouter: ControlResponder {
    let service: GameService
    /// How games are shown in answers (to the player answered for).
    var views: ReplyViews
    let network: PeerNetwork
    let events: EventHub
    let presence: PresenceService
    let book: PeerBook
    let gossip: NoteGossip
    let members: CircleMembers
    /// What a membership change does to the rest of the daemon.
    let circleChanges: CircleChanges
    /// This daemon's identity, which signs its player's profile.
    let signer: SigningIdentity
    /// The players this daemon hosts.
    let hosted: HostedPlayers
    /// The player answered for: this daemon's own (``signer``) or a hosted one.
    var player: SigningIdentity
    /// The hosted player answered for, to give the game service (nil: this daemon's own).
    var hostedPlayer: SigningIdentity? { player.peerID == signer.peerID ? nil : player }
    /// This device's defaults for what a `new` request leaves out.
    let newGameDefaults: Commands.New.Arguments
    let store: Store
    /// This daemon's player name as it started (its profile's name is what `status` shows).
    let name: String
    /// The web board, whose login addresses `web` hands out.
    let web: WebBoard
    /// The browsers paired on the home network, and whether it is served there.
    let webDevices: StoredWebDevices
    let logger: Logger

    func reply(to line: Data) async -> ControlReply {
        // Read once without JSONDecoder; what that does not take (a type it
        // does not expect, not JSON at all) goes to JSONDecoder, which decides.
        let fields = line.withUnsafeBytes { JSONLineReader.value($0)?.object }
        let head: RequestHead
        if let fields, let read = RequestHead(members: fields) {
            head = read
        } else {
            do {
                head = try ControlCoding.decoder().decode(RequestHead.self, from: line)
            } catch {
                return .answer(Self.failure(nil, .malformed("not a JSON object with an id and a command")))
            }
        }
        guard let command = head.command else {
            return .answer(Self.failure(head.id, .malformed("no \"command\"")))
        }
        do {
            return try await route(command, head.id, line, fields)
        } catch {
            return .answer(Self.failure(head.id, controlError(error, command: command)))
        }
    }

    /// Answers `command`; `fields` are the line's members as
    /// ``JSONLineReader`` read them, when it could: moves take their
    /// arguments from them.
    private func route(_ command: String, _ id: RequestID?, _ line: Data, _ fields: [String: JSONValue]?) async throws -> ControlReply {
        // While the games cannot be read back after a failed commit, every request is refused.
        try await service.reloadIfPending()
        switch command {
        case Commands.Status.name:
            return try answer(id, await status())
        case Commands.Games.name:
            let a: Commands.Games.Arguments = try args(line)
            let available =
                a.available == true && hostedPlayer == nil
                ? await service.available(from: await network.inbox.standings.peerHoldings()).map(views.available) : nil
            let games = try await service.overviews(archived: a.archived == true).map(views.listing)
            return try answer(id, Commands.Games.Result(games: games, available: available))
        case Commands.AddPlayers.name:
            let a: Commands.AddPlayers.Arguments = try args(line)
            let (after, added) = try await service.addPlayers(try players(named: a.players), to: a.game, as: hostedPlayer)
            return try answer(
                id, Commands.AddPlayers.Result(game: after.gameID.description, chosenPlayerNames: views.chosenPlayers(after) ?? [], added: added))
        case Commands.Archive.name:
            let a: Commands.Archive.Arguments = try args(line)
            let (after, changed) = try await service.archive(a.game, archived: a.archived ?? true, as: hostedPlayer)
            return try answer(id, Commands.Archive.Result(game: after.gameID.description, archived: after.isArchived, didChange: changed))
        case Commands.Forget.name:
            let a: Commands.Forget.Arguments = try args(line)
            let (game, deleted) = try await service.forget(a.game)
            await network.inbox.interestChanged()
            return try answer(id, Commands.Forget.Result(game: game.description, held: false, ops: deleted))
        case Commands.Follow.name:
            let a: Commands.Follow.Arguments = try args(line)
            let available = Set(await network.inbox.standings.peerHoldings().flatMap(\.holds.keys))
            let (game, held, ops) = try await service.follow(a.game, available: available)
            await network.inbox.interestChanged()
            return try answer(id, Commands.Follow.Result(game: game.description, held: held, ops: ops))
        case Commands.Sync.name:
            let a: Commands.Sync.Arguments = try args(line)
            if let mode = a.mode {
                try await service.setSyncMode(mode)
                await network.inbox.interestChanged()
            }
            let selection = await service.selection
            return try answer(
                id,
                Commands.Sync.Result(
                    mode: selection.mode, followedGames: selection.followed.sorted().map(\.description),
                    forgottenGames: selection.forgotten.sorted().map(\.description)))
        case Commands.New.name:
            try refuseIfRemoved()
            let request: Commands.New.Arguments = try args(line)
            let (parameters, seed, questionMarks) = try request.game(defaults: newGameDefaults)
            var players = try request.players.map { try self.players(named: $0) }
            let isPrivate = request.privateGame == true
            if isPrivate && players == nil {
                throw ControlError.badArguments("a private game needs its players (players): only they read it")
            }
            let race = request.race == true
            if race {
                guard !isPrivate else { throw ControlError.badArguments("a race is an open game: leave out privateGame") }
                // Without players, the members here race: the devices linked now and this one, with the players they host.
                let rivals = (players ?? membersHere()).subtracting([player.peerID])
                guard !rivals.isEmpty else {
                    throw ControlError.badArguments(
                        "a race needs another racer: nobody else is here (linked now); name players, or invite someone to the circle first")
                }
                players = rivals
            }
            // Made off the loop: a dense no-guess board may take long.
            let board = try await service.boards.board(parameters, seed: seed)
            // A seed the player chose lets them print the layout first: practice.
            let (replica, state) = try await service.newGame(
                parameters, seed: seed, questionMarks: questionMarks, players: players, isPrivate: isPrivate, seedChosen: request.seed != nil,
                race: race, as: hostedPlayer, board: board)
            return try answer(id, views.view(replica, state))
        case Commands.Show.name:
            let a: Commands.GameArguments = try args(line)
            let (replica, state) = try await service.game(a.game, peek: a.peek == true, as: hostedPlayer)
            _ = try await lookAtAnothersDaily(state, look: a.look == true)
            let racer = try self.racer(a.racer, in: state)
            // A finished game's ending says whether it set a record: that needs the others.
            let games = state.shown(to: racer ?? player.peerID).status == .playing ? nil : try await rivals(of: state)
            var view = views.view(replica, state, peek: a.peek == true, games: games, racer: racer)
            view.daily = try await dailyTable(of: state)
            return try answer(id, view)
        case Commands.Daily.name:
            try refuseIfRemoved()
            let (replica, state, _) = try await service.dailyGame(day: today, keys: members.dailyKeys, as: hostedPlayer)
            var view = views.view(replica, state)
            view.daily = try await dailyTable(of: state)
            return try answer(id, view)
        case Commands.Resign.name:
            try refuseIfRemoved()
            let a: Commands.GameArguments = try args(line)
            let (replica, state) = try await service.resign(a.game, as: hostedPlayer)
            let games = state.shown(to: player.peerID).status == .playing ? nil : try await rivals(of: state)
            return try answer(id, views.view(replica, state, games: games))
        case Commands.Reveal.name:
            return try answer(id, try await move(.reveal, try moveArgs(line, fields)))
        case Commands.Chord.name:
            return try answer(id, try await move(.chord, try moveArgs(line, fields)))
        case Commands.Flag.name:
            let a = try moveArgs(line, fields)
            return try answer(id, try await move(.mark(try Self.mark(a.mark)), a))
        case Commands.Point.name:
            let a: Commands.MoveArguments = try args(line)
            try refuseIfRemoved()
            let game = try await service.pointable(a.game, x: a.x, y: a.y, as: hostedPlayer)
            // On the board, so a spot: boards are at most 500 wide.
            guard let spot = PresenceSpot(game: game.bytes, x: a.x, y: a.y) else { throw ControlError.badArguments("no cell \(a.x),\(a.y)") }
            guard presence.point(at: spot, as: hostedPlayer) else {
                throw ControlError(
                    code: "rate-limited",
                    message: "you pointed \(PointTable.burst) times in \(Int(PointTable.burstWindow)) seconds; wait a moment")
            }
            return try answer(id, Commands.Point.Result(game: game.description, x: a.x, y: a.y))
        case Commands.Hint.name:
            let a: Commands.GameArguments = try args(line)
            let (state, cell) = try await service.hint(a.game, as: hostedPlayer)
            let game = state.gameID.description
            guard let cell else {
                return try answer(
                    id,
                    Commands.Hint.Result(
                        game: game, x: nil, y: nil, kind: nil, message: "no cell can be proven safe from what is shown; time to guess"))
            }
            return try answer(id, Commands.Hint.Result(game: game, x: cell.x, y: cell.y, kind: .safe, message: "\(cell.x),\(cell.y) is safe"))
        case Commands.Replay.name:
            let a: Commands.GameArguments = try args(line)
            let (replica, state) = try await service.game(a.game, peek: false, as: hostedPlayer)
            _ = try await lookAtAnothersDaily(state, look: a.look == true)
            let racer = try self.racer(a.racer, in: state)
            guard let replay = try views.replay(replica, state, racer: racer) else {
                throw ControlError.badArguments("this device cannot read that game: a private game replays for its players only")
            }
            return try answer(id, replay)
        case Commands.Scores.name:
            let a: Commands.Scores.Arguments = try args(line)
            // Without a player, only wins count: the other games are not read.
            let wins: @Sendable (GameOverview) -> Bool = { a.player != nil || $0.isRace || $0.status == .won }
            var result = try views.scores(try await service.games(archived: true, where: wins), player: a.player)
            if a.daily == true { result.daily = try await dailyTable(day: today).0 }
            return try answer(id, result)
        case Commands.Invite.name:
            let a: Commands.Invite.Arguments = try args(line)
            let seconds = a.validSeconds ?? Commands.Invite.defaultValidSeconds
            guard Commands.Invite.validRange.contains(seconds) else {
                throw ControlError.badArguments(
                    "validSeconds must be from \(Commands.Invite.validRange.lowerBound) to \(Commands.Invite.validRange.upperBound) (30 days)")
            }
            return try answer(id, try await invite(validFor: .seconds(seconds)))
        case Commands.Invitations.name:
            return try answer(id, Commands.Invitations.Result(invitations: invitations()))
        case Commands.InviteRevoke.name:
            let a: Commands.InviteRevoke.Arguments = try args(line)
            return try answer(id, try await revokeInvitation(a.invitation))
        case Commands.Join.name:
            let a: Commands.Join.Arguments = try args(line)
            return try answer(id, try await join(a))
        case Commands.Circle.name:
            return try answer(id, await circle())
        case Commands.CircleRemove.name:
            let a: Commands.CircleRemove.Arguments = try args(line)
            return try answer(id, try await removeDevice(a.device, check: a.check == true))
        case Commands.CircleAdmin.name:
            let a: Commands.CircleAdmin.Arguments = try args(line)
            return try answer(id, try await promoteDevice(a.device))
        case Commands.CircleInvitations.name:
            let a: Commands.CircleInvitations.Arguments = try args(line)
            return try answer(id, try await switchInvitations(of: a.device, allowed: a.allowed))
        case Commands.Peers.name:
            let a: Commands.Peers.Arguments = try args(line)
            let all = a.all ?? false
            let removed = Set(members.view.removed.keys)
            return try answer(
                id,
                Commands.Peers.Result(
                    // A removed device leaves the list (`--all` still shows it).
                    peers: await network.peers(all: all).filter { all || !removed.contains($0.snapshot.id) }.map { views.peer($0) },
                    unreached: all ? await network.unreached().map { ReplyViews.unreached($0) } : nil, mdns: network.mdnsStatus,
                    presence: views.presence(presence.everyone(as: player.peerID))))
        case Commands.Profile.name:
            return try answer(id, try profile(try args(line)))
        case Commands.Presence.name:
            return try answer(id, Commands.Presence.Result(presence: views.presence(presence.everyone(as: player.peerID))))
        case Commands.Cursor.name:
            throw ControlError.badArguments("cursor is sent on a subscribed connection (after subscribe), where it sets this viewer's presence")
        case Commands.Backup.name:
            let a: Commands.Backup.Arguments = try args(line)
            do {
                let copy = try await service.backUp(to: a.path)
                return try answer(id, Commands.Backup.Result(path: a.path, bytes: copy.bytes, gameCount: copy.games, peer: service.identity.description))
            } catch let refused as Store.BackupError {
                throw ControlError(code: "backup-refused", message: refused.description)
            } catch let failure as StoreError {
                throw ControlError.store(failure)
            }
        case Commands.Connect.name:
            let a: Commands.Connect.Arguments = try args(line)
            guard let endpoint = HostPort(a.address) else {
                throw ControlError.badArguments("'\(a.address)' is not HOST:PORT (use [v6]:PORT for IPv6)")
            }
            if a.check != true { await network.connect(endpoint) }
            let dial = await network.staticDial(endpoint)
            return try answer(
                id,
                Commands.Connect.Result(
                    linked: dial?.linked ?? false, peer: dial?.peer?.description, name: dial?.peer.map { views.name(of: $0) },
                    reason: dial?.failure))
        case Commands.Web.name, Commands.WebLAN.name, Commands.WebPair.name, Commands.WebDevices.name, Commands.WebRevoke.name:
            return try await webCommand(command, id, line)
        case Commands.PlayerAdd.name, Commands.PlayerPair.name, Commands.PlayerList.name, Commands.PlayerRemove.name:
            return try await playerCommand(command, id, line)
        case Commands.Subscribe.name:
            let a: Commands.Subscribe.Arguments = try args(line)
            var game: String?
            if let named = a.game { game = try await service.resolve(named).description }
            let subscription = events.subscribe(game: game, player: player.peerID.description)
            let viewer = ObjectIdentifier(subscription)
            subscription.onEnd { [presence] in presence.viewerClosed(viewer) }
            return .subscribe(answer: try Self.success(id, Commands.Subscribe.Result(game: game)), events: subscription)
        default:
            throw ControlError.unknownCommand(command)
        }
    }

    private func move(_ move: LocalMove, _ a: Commands.MoveArguments) async throws -> Commands.MoveResult {
        try refuseIfRemoved()
        return views.moveResult(try await service.move(move, game: a.game, x: a.x, y: a.y, as: hostedPlayer))
    }

    /// A name `player` may take: cleaned as every name is, and no other
    /// member's of `others` (nor one that looks like it: names are people).
    func checkedName(_ wanted: String, for player: PeerID, among others: [PeerID]) throws -> String {
        let clean = PlayerName.cleaned(wanted)
        guard !clean.isEmpty, clean == wanted else {
            throw ControlError.badArguments(
                "a name is 1 to \(PlayerName.byteLimit) bytes of UTF-8, without control characters or invisible format characters (bidi or zero-width)")
        }
        if let other = book.others(named: clean, than: player, among: others).first {
            let theirs = book.name(of: other) ?? clean
            throw ControlError(
                code: "name-taken",
                message: theirs.equalsIgnoringCase(clean)
                    ? "'\(clean)' is the name of another device of the circle (\(other.shortDescription)); choose another"
                    : "'\(clean)' looks like '\(theirs)', the name of another device of the circle (\(other.shortDescription)); choose another")
        }
        return clean
    }

    /// The palette number of a colour no member of `others` shows (a
    /// colour tells players apart; `auto` is always free), naming the free
    /// ones when it is taken.
    func checkedColour(_ wanted: String, among others: [PeerID]) throws -> UInt8 {
        guard let index = PlayerColours.index(of: wanted) else {
            throw ControlError.badArguments("colour must be one of: \(PlayerColours.choices.joined(separator: ", "))")
        }
        if index != 0 {
            let taken = Set(others.compactMap { book.profile(of: $0)?.colour }.filter { $0 != 0 }.map(Int.init))
            if taken.contains(index) {
                let free = PlayerColours.choices.enumerated().filter { $0.offset != 0 && !taken.contains($0.offset) }.map(\.element)
                throw ControlError(
                    code: "colour-taken",
                    message: "another device of the circle shows \(wanted); free colours: \(free.isEmpty ? "none (use auto)" : free.joined(separator: ", "))")
            }
        }
        return UInt8(index)
    }

    /// Shows, or sets and sends, this player's profile.
    private func profile(_ a: Commands.Profile.Arguments) throws -> Commands.Profile.Result {
        let identity = signer
        let held = book.profile(of: identity.peerID)
        if a.name != nil || a.colour != nil {
            let others = members.view.members.keys.filter { $0 != identity.peerID }
            var name = held?.name ?? self.name
            var colour = held?.colour ?? 0
            if let wanted = a.name { name = try checkedName(wanted, for: identity.peerID, among: others) }
            if let wanted = a.colour { colour = try checkedColour(wanted, among: others) }
            do {
                try store.setSetting(PeerBook.profileNameSetting, name)
                try store.setSetting(PeerBook.profileColourSetting, "\(colour)")
            } catch {
                throw controlError(error, command: Commands.Profile.name)
            }
            let note = book.ownProfile(identity: identity, name: name, colour: colour)
            gossip.broadcast(.profile(note))
            // This device's own viewers rename its player at once too.
            events.publish(ControlEvent(event: .profileChanged, presence: views.presence(identity.peerID, nil, own: identity.peerID == player.peerID)))
        }
        let note = book.profile(of: identity.peerID)
        return Commands.Profile.Result(
            peer: identity.peerID.description, name: note?.name ?? name, colourName: PlayerColours.name(of: Int(note?.colour ?? 0)))
    }

    private func status() async throws -> Commands.Status.Result {
        Commands.Status.Result(
            peer: player.peerID.description, name: book.name(of: player.peerID) ?? views.ownName, circleTag: members.keys.current.tag,
            listening: network.listening, mdns: network.mdnsStatus, peerCount: await network.connectedCount(),
            gameCount: await service.gameCount, version: SweeperVersion.current, pid: getpid(), presence: views.presence(presence.everyone(as: player.peerID)),
            removedNote: removedHere)
    }

    /// The games a finished game's ending compares it with, to say
    /// whether it set a record: those of its class that may hold a ranked
    /// win (won, or a race, whose boards may be won apart). The others are
    /// not read.
    private func rivals(of state: GameState) async throws -> [(GameReplica, GameState)] {
        let c = ReplyViews.RecordClass(state.genesis.parameters)
        return try await service.games(archived: true) { ReplyViews.RecordClass($0.parameters) == c && ($0.isRace || $0.status == .won) }
    }

    /// The racer `named` (a name or peer id, as devices are named) of the
    /// race `state`; `nil` when none is named. Naming one outside a race,
    /// or no racer of it, is refused.
    private func racer(_ named: String?, in state: GameState) throws -> PeerID? {
        guard let named else { return nil }
        guard state.isRace else { throw ControlError.badArguments("racer is for a race; this game is played together") }
        return try device(named: named, among: state.racers)
    }

    /// Today, by this device's clock and time zone (days since 1970-01-01).
    var today: Int { DailyBoard.day(ofMillis: views.clock.wallMillis, utcOffsetSeconds: SystemClock.localUTCOffsetSeconds()) }

    /// The table of the day whose board `state` is, when it is one.
    private func dailyTable(of state: GameState) async throws -> Commands.DailyTable? {
        guard let day = state.dailyDay else { return nil }
        let (table, games) = try await dailyTable(day: day)
        return games.contains { $0.state.gameID == state.gameID } ? table : nil
    }

    /// `day`'s results and each player's streak, from the boards of the
    /// day held here; and those boards (the table lists only those played).
    private func dailyTable(day: Int) async throws -> (Commands.DailyTable, [(replica: GameReplica, state: GameState)]) {
        let keys = members.dailyKeys
        let games = try await service.dailyGames(of: day, keys: keys)
        let streaks = try await service.dailyStreaks(to: day, keys: keys)
        return (views.dailyTable(day: day, games: games, streaks: streaks), games)
    }

    /// When this device (or the hosted player answered for) was removed:
    /// who removed it, when, and what to do.
    var removedHere: String? {
        if hostedPlayer != nil, !members.view.isMember(player.peerID) {
            return "this player is not a member of the circle (removed, or no longer hosted here)"
        }
        guard let removal = members.view.removed[signer.peerID] else { return nil }
        let by = book.name(of: removal.removedBy) ?? members.view.members[removal.removedBy]?.name.nonEmpty ?? removal.removedBy.shortDescription
        let when = ControlFormatting.date(millis: removal.removedMillis)
        return "this device was removed from the circle by \(by) on \(when); ask an admin for a new invite (sweeper join CODE)"
    }

    /// Refuses a change of the games on a device removed from its circle:
    /// nobody would take it.
    func refuseIfRemoved() throws {
        if let why = removedHere { throw ControlError(code: "not-a-member", message: why) }
    }

    /// A line on a subscribed connection: a viewer's `cursor`. It gets no
    /// answer; one that cannot be read, or names no game held here, clears
    /// the viewer's presence rather than leave it stale. Its game is found
    /// on the service's loop, in order with the viewer's other cursors.
    func received(_ line: Data, on subscription: EventConnection) {
        /// A cursor line, read in one pass (these come up to 20 times a second).
        struct CursorLine: Decodable {
            var command: String?
            var game: String?
            var x: Int?
            var y: Int?
        }
        let viewer = ObjectIdentifier(subscription)
        let a: CursorLine
        if let fast = line.withUnsafeBytes({ Commands.Cursor.Arguments(requestLine: $0) }) {
            a = CursorLine(command: Commands.Cursor.name, game: fast.game, x: fast.x, y: fast.y)
        } else if let read = try? ControlCoding.decoder().decode(CursorLine.self, from: line), read.command == Commands.Cursor.name {
            a = read
        } else {
            logger.debug("ignored a line after subscribe that is not a cursor")
            return
        }
        let (presence, player) = (presence, player.peerID)
        service.onLoop { service in
            var spot: PresenceSpot?
            if let game = a.game, let x = a.x, let y = a.y, let id = try? service.resolve(game) {
                spot = PresenceSpot(game: id.bytes, x: x, y: y)
            }
            presence.setCursor(spot, viewer: viewer, player: player)
        }
    }

    // MARK: Reading arguments

    /// The mark a `flag` request sets; nil cycles.
    static func mark(_ text: String?) throws -> Mark? {
        guard let text else { return nil }
        guard let mark = Mark.allCases.first(where: { $0.description == text.lowercased() }) else {
            throw ControlError.badArguments("mark must be flag, question or none")
        }
        return mark
    }

    /// A move's arguments: from the members read without JSONDecoder when
    /// each has its type, else as ``args(_:)`` reads them (and says what is wrong).
    private func moveArgs(_ line: Data, _ fields: [String: JSONValue]?) throws -> Commands.MoveArguments {
        if let fields, let a = Commands.MoveArguments(members: fields) { return a }
        return try args(line)
    }

    func args<A: Decodable>(_ line: Data) throws -> A {
        do {
            return try ControlCoding.decoder().decode(A.self, from: line)
        } catch let error as ControlError {
            throw error
        } catch let DecodingError.keyNotFound(key, _) {
            throw ControlError.badArguments("missing \"\(key.stringValue)\"")
        } catch let DecodingError.typeMismatch(_, context) {
            throw ControlError.badArguments("wrong type for \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\"")
        } catch let DecodingError.dataCorrupted(context) where !context.codingPath.isEmpty {
            throw ControlError.badArguments("bad value for \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\"")
        } catch let DecodingError.valueNotFound(_, context) {
            throw ControlError.badArguments("null \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\"")
        } catch {
            throw ControlError.badArguments("\(error)")
        }
    }

    // MARK: Answers

    /// How a failure is told to the client.
    private func controlError(_ error: any Error, command: String) -> ControlError {
        switch error {
        case let error as ControlError:
            return error
        case GameServiceError.anothersDaily(let creator):
            return ControlError(code: "not-a-player", message: "that is \(views.name(of: creator))'s board of the day: only they play it")
        case let error as GameServiceError:
            return Self.controlError(error)
        case let error as StoreError:
            logger.error("store failure", metadata: ["error": "\(error)"])
            return .store(error)
        default:
            logger.error("request failed", metadata: ["command": "\(command)", "error": "\(error)"])
            return .internal("\(error)")
        }
    }

    /// The control protocol's code and sentence for a service error.
    static func controlError(_ error: GameServiceError) -> ControlError {
        switch error {
        case .noGames:
            ControlError(code: "no-games", message: "there are no games yet; start one with `sweeper new`")
        case .unknownGame(let game):
            ControlError(code: "unknown-game", message: "no game has an id starting with '\(game)'")
        case .emptyGameID:
            ControlError.badArguments("the game id is empty: give an id or the start of one, or leave the game out for the newest")
        case .ambiguousGame(let game, let matches):
            ControlError(
                code: "ambiguous-game",
                message:
                    "'\(game)' starts \(matches.count) game ids (\(matches.prefix(4).map { String($0.description.prefix(12)) }.joined(separator: ", "))…); type more of it"
            )
        case .outsideBoard(let x, let y, let w, let h):
            ControlError(code: "outside-board", message: "cell \(x),\(y) is outside the \(w)×\(h) board (x 0–\(w - 1), y 0–\(h - 1))")
        case .gameOver(let status):
            ControlError(code: "game-over", message: "the game is over (\(status == .won ? "won" : "lost"))")
        case .noQuestionMarks:
            ControlError(code: "no-question-marks", message: "this game was made without question marks")
        case .generationFailed(let detail):
            ControlError(code: "generation-failed", message: detail)
        case .gameExists:
            ControlError(code: "game-exists", message: "a game with this id exists already (same board, same second)")
        case .notAPlayer:
            ControlError(code: "not-a-player", message: "this device watches this game: its creator chose who plays (`sweeper add-players` is the creator's)")
        case .notTheCreator:
            ControlError(code: "not-the-creator", message: "only the game's creator adds players")
        case .everyoneMayPlay:
            ControlError(code: "everyone-plays", message: "every member of the circle may move in this game already")
        case .cannotSeal(let peer):
            ControlError.badArguments("\(peer) is not a device key a private game's key can be sealed to")
        case .notARacer:
            ControlError(code: "not-a-racer", message: "only a racer gives up, in a race (`sweeper new --race` makes one)")
        case .racersAreFixed:
            ControlError(code: "racers-fixed", message: "a race's racers are chosen when it is made; start another race to add someone")
        case .anothersDaily(let creator):
            ControlError(code: "not-a-player", message: "that is \(creator.shortDescription)'s board of the day: only they play it")
        case .engine(let error):
            .internal("\(error)")
        }
    }

    func answer(_ id: RequestID?, _ result: some Encodable & Sendable) throws -> ControlReply {
        .answer(try Self.success(id, result))
    }

    private static func success(_ id: RequestID?, _ result: some Encodable & Sendable) throws -> Data {
        try ControlCoding.line(Answer.success(id, result))
    }

    private static func failure(_ id: RequestID?, _ error: ControlError) -> Data {
        (try? ControlCoding.line(Answer<Empty>.failure(id, error))) ?? Data("{\"ok\":false}\n".utf8)
    }
}

extension ControlRouter {
    /// Answers a web page's request line as the control socket would (the
    /// web server has refused what a page may not send already).
    func webReply(to line: Data) async -> WebReply {
        switch await reply(to: line) {
        case let .answer(data):
            return .answer(data)
        case let .subscribe(answer, events):
            return .subscribe(
                answer: answer, attach: { events.attach($0) }, received: { line in self.received(line, on: events) },
                end: { events.end() })
        }
    }
}
