import Foundation
import Logging
import NIOCore
import NIOPosix
import SweeperControl
import SweeperCrypto
import SweeperNet
import SweeperStore
import Testing

@testable import SweeperDaemon

/// A daemon's parts over a store in a temporary directory, assembled as
/// `Daemon.run` assembles them, driven in-process.
struct DaemonFixture {
    let directory: String
    let store: Store
    /// The daemon's one event loop: the service publishes its events there.
    let loop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next()
    let core: DaemonCore
    var events: EventHub { core.events }
    var service: GameService { core.service }
    var router: ControlRouter { core.router }
    let circle: CircleKey

    /// The parts over a new store, on `clock` (the computer's unless a test moves time itself);
    /// `webPort` 0 gives the web board a free port (it is served once a test runs its `WebServer`).
    init(clock: any DaemonClock = SystemClock(), webPort: Int? = nil) async throws {
        directory = NSTemporaryDirectory() + "sweeper-remote-\(UUID().uuidString)"
        store = try Store(directory: directory)
        // The store began counting played time now by the daemon's clock
        // (a test's clock may start on another day than the computer's).
        try store.setSetting(Store.playTimeSinceSetting, "\(clock.wallMillis)")
        core = try await Self.daemon(store: store, directory: directory, loop: loop, clock: clock, webPort: webPort)
        circle = await core.service.circle
    }

    /// The daemon's parts over `store`, as `Daemon.run` assembles them,
    /// with a peer network that listens on loopback only and dials nobody.
    static func daemon(
        store: Store, directory: String, loop: any EventLoop, clock: any DaemonClock = SystemClock(), webPort: Int? = nil
    ) async throws -> DaemonCore {
        var settings = DaemonSettings(
            stateDirectory: directory, socketPath: directory + "/c.sock", listen: ["127.0.0.1:0"], peers: [], name: "ada",
            mdns: false, logLevel: .critical, webPort: webPort)
        settings.webLANPort = webPort
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return try await DaemonCore.assemble(
            settings: settings, store: store, notifier: SystemdNotifier(environment: [:]),
            eventLoop: loop, clock: clock, logger: logger)
    }

    /// Admits `peer` to the circle as a member would: an invitation made
    /// here, redeemed by `peer`. Only members' ops are taken.
    func admit(_ peer: PeerID) async throws {
        let members = core.router.members
        let made = try members.invite(for: .seconds(3_600))
        let request = AdmissionRequest(secret: made.secret, joining: peer, member: core.router.signer.peerID)
        guard case .admitted = members.admit(request, from: peer) else { throw ControlError.internal("not admitted") }
        await core.router.circleChanges.membershipChanged()
    }

    /// Hosts players named `names` here, as `player-add` does (the fixture
    /// serves no web board, so no pairing comes with them); returns each
    /// one's peer id and a router that answers as them, by name.
    func host(_ names: [String]) async throws -> [String: (id: String, router: ControlRouter)] {
        for name in names { _ = await router.reply(to: Data(#"{"id":1,"command":"player-add","name":"\#(name)"}"#.utf8)) }
        let listed: Commands.PlayerList.Result = try await result(router, #"{"id":1,"command":"player-list"}"#)
        var out: [String: (id: String, router: ControlRouter)] = [:]
        for name in names {
            let id = try #require(listed.players.first { $0.name == name }).peer
            out[name] = (id, try #require(router.acting(as: id)))
        }
        return out
    }

    func cleanup() async {
        await core.network.node.shutdown()
        store.close()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// `show GAME`'s view.
func show(_ router: ControlRouter, _ game: String) async throws -> GameView {
    try await result(router, #"{"id":1,"command":"show","game":"\#(game)"}"#)
}

/// The result of a successful answer, decoded; throws with the error otherwise.
func result<R: Decodable & Sendable>(_ router: ControlRouter, _ line: String, as: R.Type = R.self) async throws -> R {
    guard case .answer(let data) = await router.reply(to: Data(line.utf8)) else { throw ControlError.internal("no answer") }
    if let failure = try? JSONDecoder().decode(FailureBox.self, from: data), let error = failure.error { throw error }
    return try JSONDecoder().decode(ResultBox<R>.self, from: data).result
}

/// An answer's error, when it has one.
private struct FailureBox: Decodable {
    var error: ControlError?
}
