import FoundationEssentials
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// The web board as the rest of the daemon sees it: its listeners (on
/// loopback always, on the home network when the player opts in), who may
/// use it, the login addresses `sweeper web` hands out, and the pairing of
/// phones.
public final class WebBoard: Sendable {
    /// Whether a listener is served, and where.
    public enum State: Sendable, Equatable {
        /// Not bound yet.
        case starting
        /// Served on this port.
        case serving(port: Int)
        /// Not served, and why.
        case unavailable(String)
        /// Not asked for (the home network, until `sweeper web --lan`).
        case off
    }

    /// What the board is told at start.
    public struct Settings: Sendable {
        /// The loopback port (0: any free port).
        public var port: Int
        /// The home network's port (0: any free port).
        public var lanPort: Int
        /// The folder that keeps the certificate (the daemon's state folder).
        public var certificateFolder: String
        /// The name in the certificate (the player's).
        public var commonName: String
        /// Creates settings.
        public init(port: Int, lanPort: Int, certificateFolder: String, commonName: String) {
            self.port = port
            self.lanPort = lanPort
            self.certificateFolder = certificateFolder
            self.commonName = commonName
        }
    }

    private struct Listeners {
        var loopback: State = .starting
        var lan: State = .off
        var lanChannel: (any Channel)?
        var loopbackChannel: (any Channel)?
        var certificate: WebCertificate?
        var responder: WebResponder?
        var stopping = false
    }

    /// Who may use the board on loopback.
    public let access: WebAccess
    /// Phones paired on the home network.
    public let pairing: WebPairing
    /// What the board was told at start.
    public let settings: Settings
    let connections = OpenChannels()
    private let listeners = Mutex(Listeners())
    private let eventLoop: any EventLoop
    private let logger: Logger

    /// Creates the board's shared state; nothing is bound until ``WebServer`` runs.
    public init(settings: Settings, keeper: any WebDeviceKeeper, eventLoop: any EventLoop, logger: Logger, access: WebAccess = WebAccess()) {
        self.settings = settings
        self.access = access
        self.pairing = WebPairing(keeper: keeper)
        self.eventLoop = eventLoop
        self.logger = logger
    }

    /// What answers the board's requests (the daemon's router), set once it exists.
    public func answer(with responder: @escaping WebResponder) {
        listeners.withLock { $0.responder = responder }
    }

    /// Whether and where the board is served on loopback.
    public var current: State { listeners.withLock { $0.loopback } }
    /// Whether and where the board is served to the home network.
    public var lan: State { listeners.withLock { $0.lan } }

    /// The board's address on loopback without a secret, once it is served.
    public var address: String? {
        guard case let .serving(port) = current else { return nil }
        return "http://127.0.0.1:\(port)/"
    }

    /// A login address for one browser: the board's address with a new
    /// one-time secret, opening `game` (an id) when given, as the hosted
    /// `player` (its id) when given. Nil while the board is not served.
    public func login(game: String? = nil, player: String? = nil) -> (url: String, address: String, expiresMillis: Int64)? {
        guard let address else { return nil }
        let (secret, expires) = access.issueLogin(game: game, player: player)
        return (address + "?key=" + secret, address, expires)
    }

    /// Logs out every browser of the hosted player `player` (its id): its
    /// paired devices are revoked, its sessions end, its pages close.
    /// Returns the devices revoked.
    @discardableResult
    public func logOut(player: String) throws -> [WebDevice] {
        access.logOut(player: player)
        return try pairing.revoke(player: player)
    }

    /// The home network's certificate fingerprint, once it was made.
    public var fingerprint: String? { listeners.withLock { $0.certificate?.fingerprint } }

    // MARK: Listeners

    /// Binds the loopback listener; says why in ``current`` when it cannot.
    func serveLoopback() async {
        do {
            let channel = try await bind(host: "127.0.0.1", port: settings.port, tls: nil)
            let port = channel.localAddress?.port ?? settings.port
            listeners.withLock {
                $0.loopbackChannel = channel
                $0.loopback = .serving(port: port)
            }
            logger.info("web board listening", metadata: ["address": "http://127.0.0.1:\(port)/"])
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            unavailable("port \(settings.port) of 127.0.0.1 is in use by another program (choose another with web_port in the config file)")
        } catch {
            unavailable("127.0.0.1:\(settings.port): \(error)")
        }
    }

    private func unavailable(_ why: String) {
        logger.error("the web board is not served", metadata: ["reason": "\(why)"])
        listeners.withLock { $0.loopback = .unavailable(why) }
    }

    /// Serves the board to the home network over TLS (making the
    /// certificate the first time), or stops serving it and closes every
    /// connection made there. Throws when the listener cannot be bound.
    public func serveLAN(_ on: Bool) async throws {
        if !on {
            let channel = listeners.withLock { s -> (any Channel)? in
                defer {
                    s.lanChannel = nil
                    s.lan = .off
                }
                return s.lanChannel
            }
            try? await channel?.close()
            connections.closeAll(lan: true)
            return
        }
        if case .serving = lan { return }
        let certificate: WebCertificate
        let context: NIOSSLContext
        do {
            certificate = try listeners.withLock { s -> WebCertificate in
                if let made = s.certificate { return made }
                let made = try WebCertificate.load(folder: settings.certificateFolder)
                s.certificate = made
                return made
            }
            let configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: [.certificate(try NIOSSLCertificate(bytes: certificate.der, format: .der))],
                privateKey: .privateKey(try NIOSSLPrivateKey(bytes: certificate.keyPEM, format: .pem)))
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            logger.error("the web board is not served to the home network", metadata: ["reason": "\(error)"])
            listeners.withLock { $0.lan = .unavailable("its certificate: \(error)") }
            throw error
        }
        do {
            let channel = try await bind(host: "0.0.0.0", port: settings.lanPort, tls: context)
            let port = channel.localAddress?.port ?? settings.lanPort
            listeners.withLock {
                $0.lanChannel = channel
                $0.lan = .serving(port: port)
            }
            logger.notice("web board served to the home network", metadata: ["port": "\(port)", "fingerprint": "\(certificate.fingerprint)"])
        } catch {
            listeners.withLock { $0.lan = .unavailable("port \(settings.lanPort): \(error)") }
            throw error
        }
    }

    /// Closes every listener and connection (graceful shutdown).
    func closeAll() {
        let channels = listeners.withLock { s -> [any Channel] in
            s.stopping = true
            s.loopback = .unavailable("the daemon is stopping")
            return [s.loopbackChannel, s.lanChannel].compactMap { $0 }
        }
        for channel in channels { channel.close(promise: nil) }
        connections.closeAll(lan: nil)
    }

    private func bind(host: String, port: Int, tls: NIOSSLContext?) async throws -> any Channel {
        let lan = tls != nil
        return try await ServerBootstrap(group: eventLoop)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [self] channel in
                let open = connections.add(channel, lan: lan)
                guard open.all <= WebServer.connectionLimit, !lan || open.fromAddress <= WebServer.connectionsPerAddress else {
                    logger.debug("refused a web connection: too many open", metadata: ["remote": "\(channel.remoteAddress.map { "\($0)" } ?? "unknown")"])
                    return channel.close()
                }
                let (state, responder) = listeners.withLock { s in (lan ? s.lan : s.loopback, s.responder) }
                guard case let .serving(bound) = state, let responder else { return channel.close() }
                let rules = WebRules(origin: WebOrigin(port: bound, lan: lan), access: access, pairing: pairing, fingerprint: fingerprint)
                return WebServer.configure(channel, rules: rules, tls: tls, responder: responder)
            }
            .bind(host: host, port: port).get()
    }
}

/// The board's open connections, so that shutdown (or turning the home
/// network off) can close them.
final class OpenChannels: Sendable {
    private let state = Mutex<[ObjectIdentifier: (channel: any Channel, lan: Bool, address: String)]>([:])

    /// Adds a channel until it closes; returns how many of its listener's
    /// are open with it, and how many of those from its address
    /// (``WebClientAddress``). Each listener has its own limit, so that
    /// guests on the home network cannot take the board from this
    /// computer's owner; on the home network each address has one too.
    func add(_ channel: any Channel, lan: Bool) -> (all: Int, fromAddress: Int) {
        let key = ObjectIdentifier(channel)
        let address = WebClientAddress.key(of: channel.remoteAddress)
        let count = state.withLock { s in
            s[key] = (channel, lan, address)
            let listener = s.values.filter { $0.lan == lan }
            return (listener.count, listener.filter { $0.address == address }.count)
        }
        channel.closeFuture.whenComplete { _ in self.remove(key) }
        return count
    }

    private func remove(_ key: ObjectIdentifier) {
        _ = state.withLock { $0.removeValue(forKey: key) }
    }

    /// Closes the connections of one listener (`lan`), or of both (nil).
    func closeAll(lan: Bool?) {
        let open = state.withLock { s in s.values.filter { lan == nil || $0.lan == lan }.map(\.channel) }
        for channel in open { channel.close(promise: nil) }
    }
}
