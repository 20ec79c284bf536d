import FoundationEssentials
import SweeperControl
import SweeperConventions
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `sweeper play` was asked for.
public struct PlayOptions: Sendable {
    /// The daemon's control socket.
    public var socketPath: String
    /// A game id or prefix to open; the most recent game in progress when nil.
    public var game: String?
    /// Options for a new game: when given (and no game is), a new game is started.
    public var newGame: Commands.New.Arguments?
    /// Force ASCII drawing (otherwise chosen by the locale).
    public var ascii: Bool
    /// The environment (locale, `NO_COLOR`, paths).
    public var environment: [String: String]
    /// Start `sweeperd` when none answers.
    public var startDaemon: Bool
    /// Play `game` again, move by move, instead of showing it live.
    public var replay = false
    /// Open this player's board of the day (``Commands/Daily``).
    public var daily = false
    /// In a race, whose board to replay (a racer's name or peer id).
    public var racer: String?

    /// Creates options.
    public init(
        socketPath: String, game: String? = nil, newGame: Commands.New.Arguments? = nil, ascii: Bool = false,
        environment: [String: String] = ProcessInfo.processInfo.environment, startDaemon: Bool = true
    ) {
        self.socketPath = socketPath
        self.game = game
        self.newGame = newGame
        self.ascii = ascii
        self.environment = environment
        self.startDaemon = startDaemon
    }

    /// The glyphs: ASCII when asked or when the locale is not UTF-8.
    public var glyphs: Glyphs { ascii || !Glyphs.localeIsUTF8(environment) ? .ascii : .unicode }
    /// Whether to colour: not when `NO_COLOR` is set to anything non-empty.
    public var color: Bool { (environment["NO_COLOR"] ?? "").isEmpty }
}

/// How a play session ended.
public enum PlayOutcome: Sendable, Equatable {
    /// The player quit.
    case quit
    /// Something stopped the viewer; the text says what (printed after the terminal is restored).
    case failed(String, exitCode: Int32)
}

/// News for the viewer's loop, from any task or thread.
enum SessionMessage: Sendable {
    case input([InputEvent])
    case inputEnded
    case resize
    case tick
    case subscribed
    case connectionLost(attempt: Int, delay: Double)
    case daemonRestarted(pid: Int32, log: String)
    case event(ControlEvent)
    case loaded(GameView)
    case moved(Commands.MoveResult)
    case games([GameListing])
    case peers(Commands.Peers.Result)
    case presence([PresenceInfo])
    case hint(Commands.Hint.Result)
    case identity(id: String, name: String, removed: String?)
    case refreshed(GameView?)
    case replayed(Commands.Replay.Result)
    case replayTick
    case failed(String)
    /// Opening `game` would give this player's board of the day away: ask.
    case askToLook(game: String, why: String)
}

/// `sweeper play`: the live viewer on a terminal. Reads keys on a thread of
/// its own, follows the daemon's event stream, and draws by diff.
public enum PlaySession {
    /// The longest wait between two attempts to reach a daemon that went
    /// away (the wait doubles from 0.5 s up to this). The viewer never gives
    /// up while the player watches.
    public static let longestReconnectDelay = 8.0

    /// Runs the viewer until the player quits. The terminal is restored on every way out.
    public static func run(_ options: PlayOptions) async -> PlayOutcome {
        let terminal: Terminal
        do {
            terminal = try Terminal()
        } catch {
            return .failed("\(error)", exitCode: 2)
        }
        var startedMessage: String?
        if options.startDaemon {
            do {
                if case let .started(pid, log) = try await DaemonStarter(socketPath: options.socketPath, environment: options.environment).ensureRunning() {
                    startedMessage = "Started sweeperd (pid \(pid)); its log is \(log)."
                }
            } catch {
                return .failed("\(error)", exitCode: 3)
            }
        }

        // A game asked for that the daemon does not know ends here, saying
        // so, before the screen is taken (an empty viewer would say less).
        var asked: GameView?
        if let game = options.game {
            do {
                asked = try await request(options.socketPath, Commands.Show.self, .init(game: game))
            } catch let error as ControlError {
                return .failed(error.message, exitCode: error.isBadValue ? 2 : 1)
            } catch {
                // No daemon answers yet: the viewer opens and keeps trying, as it does for any game.
            }
        }

        let (stream, continuation) = AsyncStream.makeStream(of: SessionMessage.self)
        terminal.enter()
        defer { terminal.restore() }
        InputReader.start(fd: terminal.input, continuation: continuation)

        let socket = options.socketPath
        let cursor = CursorReporter()
        // One connection for the session's requests, kept open: a key costs no connect.
        let requests = RequestConnection.kept(to: socket)
        requests.keepOpen()
        defer { requests.close() }
        let tasks = [
            Task {
                await subscribe(
                    socket: socket, restart: options.startDaemon ? DaemonStarter(socketPath: socket, environment: options.environment) : nil,
                    cursor: cursor, continuation)
            },
            Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    continuation.yield(.tick)
                }
            },
            Task { [asked] in await openFirstGame(options, asked: asked, continuation) },
            Task {
                if let status = try? await request(socket, Commands.Status.self, Empty()) {
                    continuation.yield(.identity(id: status.peer, name: status.name, removed: status.removedNote))
                }
                if let peers = try? await request(socket, Commands.Peers.self, .init()) { continuation.yield(.peers(peers)) }
            },
        ]
        defer { for t in tasks { t.cancel() } }
        // While a replay is shown, it plays on at up to 16 moves a second;
        // no timer runs otherwise.
        var replayClock: Task<Void, Never>?
        defer { replayClock?.cancel() }

        var viewer = Viewer()
        viewer.message = startedMessage
        viewer.lastNewGame = ViewerMemory(environment: options.environment).lastNewGame
        let renderer = ViewerRenderer(glyphs: options.glyphs, color: options.color)
        let screenRenderer = ScreenRenderer(color: options.color)
        var shown: Screen?
        var refresh = RefreshState()
        let start = ContinuousClock.now
        let outcome = PlayOutcome.quit
        var everSubscribed = false
        /// The pid of a daemon the viewer started again, until reconnected to it.
        var restarted: Int32?
        var ticks = 0

        func draw() {
            let size = terminal.size()
            let screen = renderer.render(&viewer, width: size.columns, height: size.rows)
            let bytes = shown.map { screenRenderer.diff(from: $0, to: screen) } ?? screenRenderer.full(screen)
            if !bytes.isEmpty { terminal.write(bytes) }
            shown = screen
        }

        func perform(_ actions: [ViewerAction]) {
            for action in actions { carryOut(action, options, &viewer, &refresh, continuation) }
        }

        draw()
        loop: for await message in stream {
            viewer.tick((ContinuousClock.now - start) / .seconds(1))
            switch message {
            case let .input(events):
                for event in events {
                    switch event {
                    case let .key(key): perform(viewer.handle(key))
                    case let .mouse(mouse):
                        let size = terminal.size()
                        let layout = renderer.layout(viewer, width: size.columns, height: size.rows)
                        perform(viewer.handle(mouse, layout: layout))
                    }
                    if viewer.quitting { break loop }
                }
            case .inputEnded:
                break loop
            case .resize:
                shown = nil  // repaint in full at the new size
            case .tick:
                // Peers' links and sync counts change without events: look again every few seconds.
                ticks += 1
                if ticks % 5 == 0, viewer.connection == .connected { perform([.listPeers]) }
            case .subscribed:
                viewer.connection = .connected
                if everSubscribed, let id = viewer.game?.game {
                    viewer.message = (restarted.map { "Restarted sweeperd (pid \($0)); " } ?? "") + "Reconnected to the daemon."
                    restarted = nil
                    perform([.refresh(game: id), .listPeers])
                }
                everSubscribed = true
                // Who looks where, as of now: events carry the changes from here on.
                Task { await answer(continuation) { .presence(try await request(socket, Commands.Presence.self, Empty()).presence) } }
            case let .connectionLost(attempt, delay):
                viewer.connection = .retrying(
                    "The daemon went away; retrying in \(String(cFormat: "%.1f", delay)) s (attempt \(attempt)). "
                        + (options.startDaemon ? "Restarting it…" : "Start it with `sweeperd &`."))
            case let .daemonRestarted(pid, log):
                viewer.message = "Restarted sweeperd (pid \(pid)); its log is \(log)."
                restarted = pid
            case let .event(event):
                perform(viewer.apply(event))
            case let .loaded(view):
                viewer.load(view)
            case let .moved(result):
                // The answer's cells are the move: the board is fetched again only when it ended the game.
                perform(viewer.apply(result))
            case let .games(list):
                viewer.showGames(list)
            case let .peers(result):
                viewer.peers = result.peers
                viewer.mdns = result.mdns
            case let .presence(list):
                viewer.setPresence(list)
            case let .hint(hint):
                viewer.showHint(hint)
            case let .identity(id, name, removed):
                viewer.selfID = id
                viewer.selfName = name
                // A device removed from its circle says so first: its moves go nowhere.
                if let removed { viewer.message = "Removed: \(removed)" }
            case let .replayed(result):
                viewer.startReplay(result)
                replayClock?.cancel()
                replayClock = Task {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: .milliseconds(1000 / ReplayMode.fastest))
                        continuation.yield(.replayTick)
                    }
                }
            case .replayTick:
                guard viewer.replay?.playing == true else { continue loop }
                perform(viewer.advanceReplay())
            case let .refreshed(view):
                // A replay shows the game as it was: the game now waits for its end.
                if let view, view.game == viewer.game?.game, viewer.replay == nil { viewer.load(view) }
                refresh.inFlight = false
                if refresh.again, let id = viewer.game?.game {
                    refresh.again = false
                    perform([.refresh(game: id)])
                }
            case let .failed(text):
                viewer.failed(text)
            case let .askToLook(game, why):
                viewer.askToLook(game: game, why: why)
            }
            if viewer.replay == nil, let clock = replayClock {
                clock.cancel()
                replayClock = nil
            }
            draw()
            cursor.report(viewer.cursorReport)
        }
        return outcome
    }

    struct RefreshState {
        var inFlight = false
        var again = false
    }

    private static func carryOut(
        _ action: ViewerAction, _ options: PlayOptions, _ viewer: inout Viewer, _ refresh: inout RefreshState,
        _ out: AsyncStream<SessionMessage>.Continuation
    ) {
        let socket = options.socketPath
        switch action {
        case let .reveal(game, x, y):
            Task { await answer(out) { .moved(try await request(socket, Commands.Reveal.self, .init(game: game, x: x, y: y))) } }
        case let .chord(game, x, y):
            Task { await answer(out) { .moved(try await request(socket, Commands.Chord.self, .init(game: game, x: x, y: y))) } }
        case let .flag(game, x, y):
            Task { await answer(out) { .moved(try await request(socket, Commands.Flag.self, .init(game: game, x: x, y: y))) } }
        case let .hint(game):
            Task { await answer(out) { .hint(try await request(socket, Commands.Hint.self, .init(game: game))) } }
        case let .peek(game):
            Task { await answer(out) { .loaded(try await request(socket, Commands.Show.self, .init(game: game, peek: true))) } }
        case let .resign(game):
            Task { await answer(out) { .loaded(try await request(socket, Commands.Resign.self, .init(game: game))) } }
        case let .startGame(arguments):
            ViewerMemory(environment: options.environment).rememberNewGame(arguments)
            Task { await answer(out) { .loaded(try await request(socket, Commands.New.self, arguments)) } }
        case let .open(game):
            Task {
                await answer(out) {
                    do {
                        return .loaded(try await request(socket, Commands.Show.self, .init(game: game)))
                    } catch let error as ControlError where error.code == "makes-practice" {
                        return .askToLook(game: game, why: error.message)
                    }
                }
            }
        case let .look(game):
            Task { await answer(out) { .loaded(try await request(socket, Commands.Show.self, .init(game: game, look: true))) } }
        case .listGames:
            Task { await answer(out) { .games(try await request(socket, Commands.Games.self, .init()).games) } }
        case .listPeers:
            Task { await answer(out) { .peers(try await request(socket, Commands.Peers.self, .init())) } }
        case let .refresh(game):
            if refresh.inFlight {
                refresh.again = true
                return
            }
            refresh.inFlight = true
            Task {
                let view = try? await request(socket, Commands.Show.self, .init(game: game))
                out.yield(.refreshed(view))
            }
        case let .replay(game):
            Task { await answer(out) { .replayed(try await request(socket, Commands.Replay.self, .init(game: game))) } }
        case let .point(game, x, y):
            // The `point` event shows it, here as on the other screens; only a refusal is news.
            Task {
                do {
                    _ = try await request(socket, Commands.Point.self, .init(game: game, x: x, y: y))
                } catch let error as ControlError {
                    out.yield(.failed(error.message))
                } catch {
                    out.yield(.failed("\(error)"))
                }
            }
        case .quit:
            viewer.quit()
        }
    }

    /// Runs a request and reports its answer, or its failure as a message.
    private static func answer(
        _ out: AsyncStream<SessionMessage>.Continuation, _ body: @Sendable () async throws -> SessionMessage
    ) async {
        do {
            out.yield(try await body())
        } catch let error as ControlError {
            out.yield(.failed(error.message))
        } catch {
            out.yield(.failed("\(error)"))
        }
    }

    static func request<C: ControlCommand>(_ socket: String, _ command: C.Type, _ arguments: C.Arguments) async throws -> C.Result
    where C.Arguments: Sendable, C.Result: Sendable {
        try await RequestConnection.kept(to: socket).call(command, arguments)
    }

    /// Opens the game asked for, a new one, or the most recent game in progress (a new one when there is none).
    /// `asked` is the game asked for, when it was read already.
    private static func openFirstGame(
        _ options: PlayOptions, asked: GameView?, _ out: AsyncStream<SessionMessage>.Continuation
    ) async {
        let socket = options.socketPath
        await answer(out) {
            if options.replay, let game = asked?.game ?? options.game {
                return .replayed(try await request(socket, Commands.Replay.self, .init(game: game, racer: options.racer)))
            }
            if options.daily { return .loaded(try await request(socket, Commands.Daily.self, Empty())) }
            if let asked { return .loaded(asked) }
            if let game = options.game {
                return .loaded(try await request(socket, Commands.Show.self, .init(game: game)))
            }
            if let arguments = options.newGame {
                return .loaded(try await request(socket, Commands.New.self, arguments))
            }
            let games = try await request(socket, Commands.Games.self, .init()).games
            if let playing = games.first(where: { $0.status == .playing }) {
                return .loaded(try await request(socket, Commands.Show.self, .init(game: playing.game)))
            }
            return .loaded(try await request(socket, Commands.New.self, Commands.New.Arguments()))
        }
    }

    /// Follows the daemon's events; when the connection ends, retries with
    /// a capped backoff, forever, and says so. With `restart` (auto-start is
    /// allowed), a daemon that does not answer is started again.
    private static func subscribe(
        socket: String, restart: DaemonStarter?, cursor: CursorReporter, _ out: AsyncStream<SessionMessage>.Continuation
    ) async {
        var attempt = 0
        while !Task.isCancelled {
            if attempt > 0, let restart, case let .started(pid, log)? = try? await restart.ensureRunning() {
                out.yield(.daemonRestarted(pid: pid, log: log))
            }
            let subscribed: Bool
            do {
                subscribed = try await ControlClient.withConnection(socketPath: socket) { client in
                    let events = try await client.subscribe(game: nil)
                    out.yield(.subscribed)
                    let forwarding = Task { await cursor.forward(to: client) }
                    defer { forwarding.cancel() }
                    for await event in events { out.yield(.event(event)) }
                    return true
                }
            } catch {
                subscribed = false
            }
            if Task.isCancelled { return }
            attempt = subscribed ? 1 : attempt + 1
            let delay = min(longestReconnectDelay, 0.5 * Double(1 << min(attempt - 1, 5)))
            out.yield(.connectionLost(attempt: attempt, delay: delay))
            try? await Task.sleep(for: .seconds(delay))
        }
    }
}

/// Tells the daemon where the viewer's cursor is, on its event
/// subscription: the latest place at once on each (re)connection, then
/// every change. Moves made faster than they can be written are coalesced
/// into the last.
final class CursorReporter: Sendable {
    private struct State {
        var latest = Commands.Cursor.Arguments()
        var wake: AsyncStream<Void>.Continuation?
    }

    private let state = Mutex(State())

    /// The viewer is now here.
    func report(_ place: Commands.Cursor.Arguments) {
        let wake: AsyncStream<Void>.Continuation? = state.withLock { s in
            guard s.latest != place else { return nil }
            s.latest = place
            return s.wake
        }
        wake?.yield()
    }

    /// Sends the latest place, then each change, on `client`, until
    /// cancelled or the connection fails.
    func forward(to client: ControlClient) async {
        let (changes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        state.withLock { $0.wake = wake }
        defer { wake.finish() }
        wake.yield()
        var sent: Commands.Cursor.Arguments?
        for await _ in changes {
            let place = state.withLock { $0.latest }
            guard place != sent else { continue }
            do {
                try await client.setCursor(place)
            } catch {
                return
            }
            sent = place
        }
    }
}

/// What the viewer remembers on this device between runs (not synced): the
/// new game last started from its form. A small JSON file in the state
/// directory; a file that cannot be read or written is passed over.
struct ViewerMemory {
    /// The file.
    let path: String

    init(environment: [String: String]) {
        path = SweeperPaths(environment: environment).stateDirectory + "/viewer.json"
    }

    private struct Contents: Codable {
        var lastNewGame: Commands.New.Arguments?
    }

    /// The new game last started from the form, if any.
    var lastNewGame: Commands.New.Arguments? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return (try? JSONDecoder().decode(Contents.self, from: data))?.lastNewGame
    }

    /// Remembers the new game just started from the form (its size and no-guess, not its seed).
    func rememberNewGame(_ arguments: Commands.New.Arguments) {
        var kept = arguments
        (kept.seed, kept.startX, kept.startY) = (nil, nil, nil)
        guard let data = try? JSONEncoder().encode(Contents(lastNewGame: kept)) else { return }
        try? PrivateDirectory.make(SweeperPaths.folder(of: path))
        guard FileManager.default.createFile(atPath: path + ".new", contents: data, attributes: [.posixPermissions: 0o600]) else { return }
        _ = rename(path + ".new", path)
    }
}
