import ArgumentParser
import FoundationEssentials
import SweeperControl
import SweeperGame

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Options shared by every command that talks to the daemon.
struct ClientOptions: ParsableArguments {
    @Option(name: .customLong("socket"), help: "The daemon's control socket (default $SWEEPER_SOCKET, else $XDG_RUNTIME_DIR/sweeper/control.sock).")
    var socket: String?

    @Flag(name: .customLong("json"), help: "Print JSON for scripts.")
    var json = false

    var socketPath: String { socket ?? ControlClient.defaultSocketPath() }
}

/// Calls the daemon and prints the result; maps failures to exit codes:
/// 2 a bad value (`ControlError.isBadValue`), 1 refused otherwise by the
/// game or the daemon, 3 no daemon answering.
func callDaemon<C: ControlCommand>(
    _ options: ClientOptions, _ command: C.Type, _ arguments: C.Arguments, again: ((ControlError) throws -> C.Arguments?)? = nil,
    text: (C.Result) -> String
) async throws {
    let result = try await askDaemon(options, command, arguments, again: again)
    if options.json {
        printJSON(result)
    } else {
        Output.write(text(result))
    }
}

/// Sends one command to the daemon and returns its answer, printing what
/// went wrong (and exiting) as ``callDaemon(_:_:_:again:text:)`` does.
/// `again` may turn a refusal into other arguments to send once more
/// (after asking the person at the terminal).
func askDaemon<C: ControlCommand>(
    _ options: ClientOptions, _ command: C.Type, _ arguments: C.Arguments, again: ((ControlError) throws -> C.Arguments?)? = nil
) async throws -> C.Result {
    do {
        return try await ControlClient.withConnection(socketPath: options.socketPath) { client in
            try await client.call(command, arguments)
        }
    } catch let error as ControlError {
        if let again, let retried = try again(error) { return try await askDaemon(options, command, retried) }
        if options.json {
            printJSON(["error": error])
        }
        Output.write("sweeper: \(error.message)\n".utf8, to: STDERR_FILENO)
        throw ExitCode(error.isBadValue ? 2 : 1)
    } catch let error as ControlClientError {
        // A script asked for JSON: it gets JSON, whatever went wrong.
        if options.json { printJSON(["error": ControlError(code: error.code, message: error.description)]) }
        Output.write("sweeper: \(error)\n".utf8, to: STDERR_FILENO)
        switch error {
        case .noDaemon, .starting: throw ExitCode(3)
        default: throw ExitCode(1)
        }
    } catch {
        if options.json { printJSON(["error": ControlError(code: "client", message: "\(error)")]) }
        Output.write("sweeper: \(error)\n".utf8, to: STDERR_FILENO)
        throw ExitCode(1)
    }
}

func printJSON(_ value: some Encodable) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    if var data = try? encoder.encode(value) {
        data.append(0x0A)
        Output.write(data)
    }
}

/// `sweeper status`.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show the daemon's identity, circle, peers and games.")
    @OptionGroup var options: ClientOptions
    func run() async throws {
        try await callDaemon(options, Commands.Status.self, Empty(), text: ControlFormatting.status)
    }
}

/// `sweeper games`.
struct GamesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "games", abstract: "List games, newest first.")
    @OptionGroup var options: ClientOptions
    @Flag(help: "Also list the games linked peers have and this device does not (follow them with `sweeper follow`).")
    var available = false
    @Flag(help: "Also list archived games (`sweeper archive`), marked as such.")
    var archived = false
    func run() async throws {
        try await callDaemon(options, Commands.Games.self, .init(available: available ? true : nil, archived: archived ? true : nil)) { result in
            ControlFormatting.games(result.games) + (result.available.map(ControlFormatting.available) ?? "")
        }
    }
}

/// `sweeper follow`.
struct FollowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "follow", abstract: "Sync a game a peer has (see `games --available`) or one forgotten, catching it up now.")
    @OptionGroup var options: ClientOptions
    @Argument(help: "A game id or unique prefix.") var game: String
    func run() async throws {
        try await callDaemon(options, Commands.Follow.self, .init(game: game)) { r in
            r.held
                ? "Following \(r.game) (held here, \(ControlFormatting.count(r.ops, "op"))).\n" : "Following \(r.game): it comes from the peers that have it.\n"
        }
    }
}

/// The game a command acts on, by id or unique prefix (completed from the daemon's games).
struct GameOperand: ParsableArguments {
    @Argument(help: "A game id or unique prefix.", completion: .custom { words, _, _ in GameIDCompletion.ids(words: words) })
    var game: String
}

/// `sweeper forget`.
struct ForgetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget", abstract: "Remove a game from this device: its ops leave the database and peers stop sending it.")
    @OptionGroup var options: ClientOptions
    @OptionGroup var named: GameOperand
    var game: String { named.game }
    func run() async throws {
        try await callDaemon(options, Commands.Forget.self, .init(game: game)) { r in
            "Forgot \(r.game) (\(ControlFormatting.count(r.ops, "op")) deleted). `sweeper follow \(ControlFormatting.shortID(r.game))` brings it back.\n"
        }
    }
}

/// `sweeper sync`.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync", abstract: "Show or set which games this device syncs: all (the default) or mine.")
    @OptionGroup var options: ClientOptions
    @Argument(help: "all: every game of the circle but those forgotten; mine: the games held here and those followed.")
    var mode: SyncMode?
    func run() async throws {
        try await callDaemon(options, Commands.Sync.self, .init(mode: mode), text: ControlFormatting.sync)
    }
}

extension SyncMode: ExpressibleByArgument {}

/// The options that describe a new game, shared by `new` and `play`.
struct NewGameOptions: ParsableArguments {
    @Option(help: "beginner (9×9, 10), intermediate (16×16, 40) or expert (30×16, 99).") var preset: Preset?
    @Option(help: "Width in cells (2–500).") var width: Int?
    @Option(help: "Height in cells (2–500).") var height: Int?
    @Option(help: "Number of mines.") var mines: Int?
    @Flag(name: .customLong("no-guess"), help: "Only boards solvable without guessing.") var noGuess = false
    @Option(help: "The generator's seed: a board chosen so is practice, never a record.") var seed: UInt64?
    @Option(help: "The start cell X,Y (default: the centre).") var start: Cell?
    @Flag(name: .customLong("question-marks"), help: "Let marks cycle through question marks.") var questionMarks = false
    @Option(
        help: ArgumentHelp(
            "Who may move: all (the default), or devices of the circle by name or peer id, comma-separated; this device always plays and the others watch.",
            valueName: "all|NAME,…"))
    var players: String?
    @Flag(
        name: .customLong("private"),
        help:
            "Only the players read the game: its moves are sealed with a key only they hold; the other members relay it unread and do not list it. Needs --players."
    )
    var isPrivate = false
    @Flag(
        help: "Race: you and the players (--players, or every member of the circle) each play this board on a board of your own; the first to clear it wins.")
    var race = false

    /// Whether any option was given.
    var isEmpty: Bool {
        preset == nil && width == nil && height == nil && mines == nil && !noGuess && seed == nil && start == nil && !questionMarks
            && players == nil && !isPrivate && !race
    }

    /// The devices `--players` names, or `nil` for all.
    var chosenPlayers: [String]? {
        guard let players, players.lowercased() != "all" else { return nil }
        return players.split(separator: ",").map { $0.trimmedOfWhitespace }.filter { !$0.isEmpty }
    }

    func validate() throws {
        if let chosen = chosenPlayers, chosen.isEmpty {
            throw ValidationError("--players takes all, or names or peer ids separated by commas")
        }
        if isPrivate && chosenPlayers == nil {
            throw ValidationError("--private needs --players NAME,… (who reads the game)")
        }
        if isPrivate && race { throw ValidationError("a race is an open game: give --race or --private, not both") }
        if preset != nil && (width != nil || height != nil || mines != nil) {
            throw ValidationError("give --preset or --width/--height/--mines, not both")
        }
        let given = [width, height, mines].compactMap { $0 }.count
        if given != 0 && given != 3 { throw ValidationError("give --width, --height and --mines together") }
        // The size, mines and start cell are checked here as `board generate`
        // checks them, so a bad value is a usage error that says what is allowed.
        do {
            if let width, let height, let mines {
                _ = try GameParameters(width: width, height: height, mines: mines, start: start, noGuess: noGuess)
            } else if let preset {
                _ = try GameParameters(preset: preset, start: start, noGuess: noGuess)
            }
            // Without a size, the daemon's defaults for this device decide it, and the daemon checks the start.
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// The request's arguments.
    var arguments: Commands.New.Arguments {
        Commands.New.Arguments(
            preset: preset?.rawValue, width: width, height: height, mines: mines, noGuess: noGuess ? true : nil, seed: seed,
            startX: start?.x, startY: start?.y, questionMarks: questionMarks ? true : nil, players: chosenPlayers,
            privateGame: isPrivate ? true : nil, race: race ? true : nil)
    }
}

/// `sweeper add-players`.
struct AddPlayersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add-players", abstract: "Let more devices move in a game whose players you chose (players are never removed).")
    @OptionGroup var options: ClientOptions
    @OptionGroup var named: GameOperand
    var game: String { named.game }
    @Argument(help: "Devices of the circle, by name or peer id.") var players: [String]
    func validate() throws {
        if players.isEmpty { throw ValidationError("name at least one device to add") }
    }
    func run() async throws {
        try await callDaemon(options, Commands.AddPlayers.self, .init(game: game, players: players)) { r in
            (r.added == 0 ? "Nobody new: " : "Added \(r.added). ")
                + "Players of \(ControlFormatting.shortID(r.game)): \(r.chosenPlayerNames.joined(separator: ", ")).\n"
        }
    }
}

/// `sweeper archive`.
struct ArchiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "archive", abstract: "Hide a game from every device's list (`games --archived` still shows it), or show it again.")
    @OptionGroup var options: ClientOptions
    @OptionGroup var named: GameOperand
    var game: String { named.game }
    @Flag(help: "Show the archived game in the lists again.") var undo = false
    @Flag(help: "Archive without asking (on a terminal it asks first: archiving hides the game on every device).") var yes = false
    func run() async throws {
        if !undo, !yes, isatty(STDIN_FILENO) == 1, !options.json {
            // Which game the id names, before anyone is asked.
            let view = try await askDaemon(options, Commands.Show.self, .init(game: game))
            let what =
                "\(ControlFormatting.shortID(view.game)) (\(ControlFormatting.size(width: view.width, height: view.height, mines: view.mines)), "
                + "\(ControlFormatting.status(view.status, progress: view.progress)))"
            try askYes("Archive \(what) on every device?", or: "Nothing archived.")
        }
        try await callDaemon(options, Commands.Archive.self, .init(game: game, archived: !undo)) { r in
            let id = ControlFormatting.shortID(r.game)
            if !r.didChange { return "\(id) is \(r.archived ? "archived" : "listed") already.\n" }
            return r.archived ? "Archived \(id) on every device; `sweeper archive --undo \(id)` lists it again.\n" : "\(id) is listed again.\n"
        }
    }
}

/// `sweeper new`.
struct NewCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "new", abstract: "Start a game and print its id.")
    @OptionGroup var options: ClientOptions
    @OptionGroup var game: NewGameOptions

    func run() async throws {
        try await callDaemon(options, Commands.New.self, game.arguments) { "\($0.game)\n" }
    }
}

/// `sweeper show`.
struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show a game's board and status.")
    @OptionGroup var options: ClientOptions
    @Argument(
        help: "A game id or unique prefix (default: the most recent game).",
        completion: .custom { words, _, _ in GameIDCompletion.ids(words: words) })
    var game: String?
    @Flag(help: "Also show the mines; marks the game as assisted for everyone.") var peek = false
    @Option(help: "In a race, whose board (a racer's name or peer id; default: yours).") var racer: String?
    @Flag(help: "Show another player's board of today although yours has not ended: marks yours as having looked at the mines (on a terminal it asks).")
    var look = false
    func run() async throws {
        let arguments = Commands.GameArguments(game: game, peek: peek ? true : nil, racer: racer, look: look ? true : nil)
        let json = options.json
        try await callDaemon(
            options, Commands.Show.self, arguments,
            again: { error in
                // Another's board of today gives yours away: asked on a terminal, as the daemon says why.
                guard error.code == "makes-practice", !json else { return nil }
                guard isatty(STDIN_FILENO) == 1 else {
                    Output.write("sweeper: \(error.message); add --look to show it all the same\n".utf8, to: STDERR_FILENO)
                    throw ExitCode(1)
                }
                try askYes("\(error.message.prefix(1).uppercased() + error.message.dropFirst()). Show it?", or: "Not shown.")
                var looking = arguments
                looking.look = true
                return looking
            }, text: ControlFormatting.show)
    }
}

/// `sweeper resign`.
struct ResignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resign", abstract: "Give up your board in a race: your part ends, lost; the others race on.")
    @OptionGroup var options: ClientOptions
    @OptionGroup var named: GameOperand
    var game: String { named.game }
    func run() async throws {
        try await callDaemon(options, Commands.Resign.self, .init(game: game)) { v in
            (v.race.map { ControlFormatting.race($0).joined(separator: "\n") + "\n" } ?? "") + "You gave up \(ControlFormatting.shortID(v.game)).\n"
        }
    }
}

/// `GAME X Y`: the cell a move acts on.
struct CellTarget: ParsableArguments {
    @Argument(help: "A game id or unique prefix.", completion: .custom { words, _, _ in GameIDCompletion.ids(words: words) })
    var game: String
    @Argument(help: "Column, from 0.") var x: Int
    @Argument(help: "Row, from 0.") var y: Int

    /// The commands that take a cell.
    static let commands: Set<String> = ["reveal", "flag", "chord"]

    /// What to say of a negative coordinate given to a cell command: the
    /// parser would read `-1` as an option and complain of a missing
    /// argument instead.
    static func negativeCoordinate(in arguments: [String]) -> String? {
        guard let i = arguments.firstIndex(where: { commands.contains($0) }) else { return nil }
        guard let bad = arguments[(i + 1)...].first(where: { $0.hasPrefix("-") && Int($0) != nil }) else { return nil }
        return "\(bad) is out of range: x and y count from 0 (0 0 is the top-left cell)\n"
            + "Usage: sweeper \(arguments[i]) <game> <x> <y>"
    }

    func validate() throws {
        guard x >= 0, y >= 0 else { throw ValidationError("\(min(x, y)) is out of range: x and y count from 0") }
    }
}

/// `sweeper reveal GAME X Y`.
struct RevealCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "reveal", abstract: "Reveal a cell.")
    @OptionGroup var options: ClientOptions
    @OptionGroup var cell: CellTarget
    func run() async throws {
        try await callDaemon(options, Commands.Reveal.self, .init(game: cell.game, x: cell.x, y: cell.y), text: ControlFormatting.move)
    }
}

/// `sweeper flag GAME X Y [--mark …]`.
struct FlagCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "flag", abstract: "Flag a cell, or cycle its mark.")
    @OptionGroup var options: ClientOptions
    @OptionGroup var cell: CellTarget
    @Option(help: "flag, question or none (default: cycle).") var mark: MarkChoice?
    func run() async throws {
        try await callDaemon(
            options, Commands.Flag.self, .init(game: cell.game, x: cell.x, y: cell.y, mark: mark?.rawValue), text: ControlFormatting.move)
    }
}

/// `sweeper chord GAME X Y`.
struct ChordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "chord", abstract: "Reveal the unflagged neighbours of a satisfied number.")
    @OptionGroup var options: ClientOptions
    @OptionGroup var cell: CellTarget
    func run() async throws {
        try await callDaemon(options, Commands.Chord.self, .init(game: cell.game, x: cell.x, y: cell.y), text: ControlFormatting.move)
    }
}

/// `sweeper point GAME X Y`.
struct PointCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "point", abstract: "Point at a cell: every player with the game open sees it flash in your colour.")
    @OptionGroup var options: ClientOptions
    @OptionGroup var cell: CellTarget
    func run() async throws {
        try await callDaemon(options, Commands.Point.self, .init(game: cell.game, x: cell.x, y: cell.y)) {
            "Pointed at \($0.x),\($0.y) of \(ControlFormatting.shortID($0.game)).\n"
        }
    }
}

/// `sweeper hint GAME`.
struct HintCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hint", abstract: "Name a cell that can be proven safe.",
        discussion: "A hint is a signed move of the player who asks: the game is marked assisted for everyone and can set no record. Only its players may ask.")
    @OptionGroup var options: ClientOptions
    @OptionGroup var named: GameOperand
    var game: String { named.game }
    func run() async throws {
        try await callDaemon(options, Commands.Hint.self, .init(game: game)) { "\($0.message)\n" }
    }
}

/// `sweeper scores`.
struct ScoresCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scores",
        abstract: "The ten best times of each class of board, and the wins that are not ranked.",
        discussion: """
            A win is ranked when nobody asked for a hint or looked at the mines and the seed was not chosen;             classes are a size with its mines, no-guess boards apart from classic ones.
            """)
    @OptionGroup var options: ClientOptions
    @Option(name: .long, help: "Also this player's records and totals (games played, won, lost, mines tripped, best 3BV/s).")
    var player: String?
    @Flag(help: "Also today's board of the day: each player's result and streak (sweeper daily plays it).")
    var daily = false
    func run() async throws {
        try await callDaemon(options, Commands.Scores.self, Commands.Scores.Arguments(player: player, daily: daily ? true : nil)) {
            ControlFormatting.scores($0)
        }
    }
}

/// `sweeper peers`.
struct PeersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peers", abstract: "List known and connected peers, with their sync state.")
    @OptionGroup var options: ClientOptions
    @Flag(help: "Also list daemons of other circles seen on the network.")
    var all = false
    func run() async throws {
        try await callDaemon(options, Commands.Peers.self, .init(all: all)) { ControlFormatting.peers($0) }
    }
}

/// `sweeper connect HOST:PORT`.
struct ConnectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connect", abstract: "Dial a peer by address, and say whether it linked (exits 1 when a dial failed).")
    @OptionGroup var options: ClientOptions
    @Argument(help: "HOST:PORT of the peer.") var address: String
    @Option(help: "How long to wait for the link, in seconds (0 to 60; 0 looks once).") var wait: Double = 3

    func validate() throws {
        guard wait.isFinite, (0...60).contains(wait) else { throw ValidationError("--wait must be 0 to 60 seconds, not \(wait)") }
    }

    /// What `connect` says of the dial: `--json` prints it as it is.
    struct Outcome: Encodable {
        /// The address dialled.
        var address: String
        /// Whether a peer at it is linked now.
        var linked: Bool
        /// The linked peer's id and name.
        var peer: String?
        var name: String?
        /// Why the last dial failed, when it did.
        var reason: String?

        var text: String {
            if linked, let peer {
                return "Linked to \(ControlFormatting.device(name: name ?? "", peerID: peer)) at \(address).\n"
            }
            return "Not linked to \(address) yet\(reason.map { ": \($0)" } ?? ""). The daemon keeps trying (see sweeper peers --all).\n"
        }
    }

    func run() async throws {
        let first = try await askDaemon(options, Commands.Connect.self, .init(address: address))
        let outcome = await self.outcome(first)
        if options.json {
            printJSON(outcome)
        } else {
            Output.write(outcome.text, to: outcome.linked ? STDOUT_FILENO : STDERR_FILENO)
        }
        // Could not: a dial failed (refused, unreachable, another circle). Still dialling is said, and is no failure.
        if !outcome.linked && outcome.reason != nil { throw ExitCode(1) }
    }

    /// Whether the dial linked within `wait` seconds, or why not yet, as
    /// the daemon says (asked again with `check`): it keeps dialling either way.
    private func outcome(_ first: Commands.Connect.Result) async -> Outcome {
        let deadline = ContinuousClock.now + .milliseconds(Int(wait * 1000))
        var answer = first
        // A link the far side refuses (a device removed from the circle) closes at once:
        // linked is said once the link has held half a second (or at the end of the wait).
        var linkedSince: ContinuousClock.Instant?
        while true {
            if answer.linked == true, let peer = answer.peer {
                let since = linkedSince ?? .now
                linkedSince = since
                if ContinuousClock.now - since >= .milliseconds(500) || ContinuousClock.now >= deadline {
                    return Outcome(address: address, linked: true, peer: peer, name: answer.name)
                }
            } else {
                linkedSince = nil
                // A dial that failed is said at once: the daemon goes on trying, with backoff.
                if answer.reason != nil || ContinuousClock.now >= deadline {
                    return Outcome(address: address, linked: false, reason: answer.reason)
                }
            }
            try? await Task.sleep(for: .milliseconds(100))
            let check = Commands.Connect.Arguments(address: address, check: true)
            if let next = try? await ControlClient.withConnection(socketPath: options.socketPath, { try await $0.call(Commands.Connect.self, check) }) {
                answer = next
            }
        }
    }
}

/// `sweeper profile [--name NAME] [--colour COLOUR]`.
struct ProfileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile",
        abstract: "Show or set your name and colour, as every member of the circle sees them.")
    @OptionGroup var options: ClientOptions
    @Option(help: "Your name (1 to 64 bytes).") var name: String?
    @Option(
        name: [.customLong("colour"), .customLong("color")],
        help: "Your colour: auto (derived from your peer id), blue, green, magenta, cyan, red, yellow, light-blue or pink.")
    var colour: ColourChoice?
    func run() async throws {
        try await callDaemon(options, Commands.Profile.self, .init(name: name, colour: colour?.rawValue)) { p in
            "\(p.name) (colour \(p.colourName)), peer \(p.peer)\n"
        }
    }
}

/// The commands that talk to the daemon, for the root command's list.
let daemonCommands: [any ParsableCommand.Type] = [
    StatusCommand.self, PeersCommand.self, GamesCommand.self, NewCommand.self, ShowCommand.self, RevealCommand.self,
    FlagCommand.self, ChordCommand.self, PointCommand.self, HintCommand.self, InviteCommand.self, JoinCommand.self, ConnectCommand.self,
    ScoresCommand.self, ProfileCommand.self, FollowCommand.self, ForgetCommand.self, SyncCommand.self, CircleCommand.self,
    AddPlayersCommand.self, ArchiveCommand.self, ResignCommand.self, WebCommand.self, PlayerCommand.self, BackupCommand.self,
]
