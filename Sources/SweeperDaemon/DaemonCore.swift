import Logging
import NIOCore
import SweeperControl
import SweeperStore
import SweeperWeb

/// The daemon's parts over an open store, wired in layer order, each given
/// at construction what it sends its changes to: the sinks (viewers'
/// events, the links and their sync sessions, note gossip, systemd's status
/// line), then the game service,
/// then the peer side (sync sessions, node, discovery), then the control
/// router. Nothing calls back up. `Daemon.run` serves these; the tests and
/// fuzz targets that drive the daemon in-process assemble the same.
struct DaemonCore: Sendable {
    /// Viewers' events.
    let events: EventHub
    /// systemd's status line.
    let status: DaemonStatus
    /// The games.
    let service: GameService
    /// The peer node, its sync sessions and discovery.
    let network: PeerNetwork
    /// Who is looking at which game.
    let presence: PresenceService
    /// The games' played time.
    let play: PlayClock
    /// The control requests' router.
    let router: ControlRouter
    /// The web board's address and who may use it.
    let web: WebBoard

    /// Why the parts could not be assembled.
    enum StartError: Error, CustomStringConvertible {
        /// The identity, circle or games could not be read.
        case state(any Error)
        /// No listener could be bound for peers.
        case listen(any Error)

        var description: String {
            switch self {
            case .state(let error): "cannot load the state: \(error)"
            case .listen(let error): "cannot listen for peers: \(error)"
            }
        }
    }

    /// The setting that keeps the peer port chosen without `--listen`.
    static let portSetting = "peer.port"

    /// Loads the games from `store` and assembles the parts on `eventLoop`;
    /// the peer node's listeners are bound, nothing runs yet.
    static func assemble(
        settings: DaemonSettings, store: Store, notifier: SystemdNotifier, eventLoop: any EventLoop,
        clock: any DaemonClock = SystemClock(), logger: Logger
    ) async throws(StartError) -> DaemonCore {
        let engine: GameEngine
        do {
            let report = StartReplayReport(notifier: notifier, clock: clock, logger: logger)
            engine = try GameEngine.load(store, logger: logger, replaying: report.report)
        } catch {
            throw .state(error)
        }
        logger.info(
            "games loaded", metadata: ["fromSnapshots": "\(engine.loaded.fromSnapshots)", "replayed": "\(engine.loaded.replayed)"])
        let events = EventHub()
        let links = LinkRegistry()
        let sessions = SyncSessions(ownID: engine.identity.peerID, links: links, eventLoop: eventLoop, clock: clock, logger: logger)
        let gossip = NoteGossip(links: links, logger: logger)
        let status = DaemonStatus(notifier: notifier)
        let book = PeerBook(store: store, clock: clock, logger: logger)
        // The name `sweeper profile` chose on this device wins over --name and
        // the config file; the profile carries it to every member.
        var settings = settings
        if let chosen = (try? store.setting(PeerBook.profileNameSetting)) ?? nil, !chosen.isEmpty { settings.name = chosen }
        let colour = ((try? store.setting(PeerBook.profileColourSetting)) ?? nil).flatMap(UInt8.init) ?? 0
        book.ownProfile(identity: engine.identity, name: settings.name, colour: colour)
        // The sync mode chosen at run time (`sweeper sync`) wins over the config file's.
        let mode = ((try? store.setting(Store.syncModeSetting)) ?? nil).flatMap(SyncMode.init(rawValue:)) ?? settings.sync
        let selection = SyncSelection(mode: mode, choices: (try? store.gameChoices()) ?? [:])
        let hosted = HostedPlayers(store: store)
        let play = PlayClock(
            identity: engine.identity, hosted: hosted, store: store, shares: gossip, forgotten: selection.forgotten, clock: clock, logger: logger)
        let members = CircleMembers(store: store, identity: engine.identity, firstKey: engine.circle, clock: clock, logger: logger)
        let views = ReplyViews(ownID: engine.identity.peerID, ownName: settings.name, peers: book, members: members, links: links, play: play, clock: clock)
        let service = GameService(
            store: store, engine: engine,
            sinks: GameServiceSinks(
                changes: GameEvents(events: events, views: views), sessions: sessions, links: links, status: status, play: play),
            logger: logger, eventLoop: eventLoop, selection: selection, clock: clock)
        let peerEvents = PeerEvents(events: events, views: views)
        let presence = PresenceService(
            identity: engine.identity, hosted: hosted, links: links, gossip: gossip, changes: peerEvents, play: play, eventLoop: eventLoop, clock: clock,
            logger: logger)
        let addresses = AddressGossip(
            identity: engine.identity, links: links, gossip: gossip, clock: clock, isMember: { [members] in members.view.isMember($0) })
        let inbox = PeerInbox(
            service: service, links: links, sessions: sessions, gossip: gossip, peers: book, changes: peerEvents, presence: presence, play: play,
            members: members, addresses: addresses, clock: clock, logger: logger)
        let network: PeerNetwork
        let previousPort = (try? store.setting(Self.portSetting)).flatMap { $0.flatMap(Int.init) }
        do {
            network = try await PeerNetwork.start(
                settings: settings, identity: engine.identity, policy: members.linkPolicy, inbox: inbox, book: book,
                preferredPort: previousPort, eventLoop: eventLoop, logger: logger)
        } catch {
            throw .listen(error)
        }
        addresses.attach(network.node, listening: await network.node.listeningAddresses)
        // The port chosen without --listen is kept, so it is the same after a restart.
        if settings.listen.isEmpty, let port = await network.node.listeningAddresses.first?.port, port != previousPort {
            do {
                try store.setSetting(Self.portSetting, "\(port)")
            } catch {
                logger.warning("could not remember the peer port", metadata: ["error": "\(error)"])
            }
        }
        // Removals decided while this daemon was away (or before a crash)
        // take effect before any peer is heard; later ones as they come.
        await service.applyRemovals(members.removals, readmitted: members.readmitted)
        await service.admitAuthors { [members] in members.opAuthors(holding: $0) }
        let circle = CircleChanges(members: members, service: service, network: network, logger: logger)
        members.observe { made in await circle.membershipChanged(made: made) }
        let devices = StoredWebDevices(store: store)
        let web = WebBoard(
            settings: .init(
                port: settings.webPort ?? WebServer.defaultPort, lanPort: settings.webLANPort ?? WebServer.defaultLANPort,
                certificateFolder: settings.stateDirectory, commonName: settings.name),
            keeper: devices, eventLoop: eventLoop, logger: logger)
        let router = ControlRouter(
            service: service, views: views, network: network, events: events, presence: presence, book: book, gossip: gossip,
            members: members, circleChanges: circle,
            signer: engine.identity, hosted: hosted, player: engine.identity, newGameDefaults: settings.newGame, store: store,
            name: settings.name, web: web, webDevices: devices, logger: logger)
        // The web board's pages are answered by the same router as the control socket.
        // A browser paired to a hosted player is answered as that player; one
        // whose player is gone gets nothing but that.
        web.answer { line, player in
            guard let acting = router.acting(as: player) else { return .answer(ControlRouter.playerGone(line)) }
            return await acting.webReply(to: line)
        }
        return DaemonCore(
            events: events, status: status, service: service, network: network, presence: presence, play: play, router: router, web: web)
    }
}
