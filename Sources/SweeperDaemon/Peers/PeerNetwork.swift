import FoundationEssentials
import Logging
import NIOCore
import ServiceLifecycle
import SweeperConventions
import SweeperCrypto
import SweeperDiscovery
import SweeperMessages
import SweeperNet

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The daemon's peer side: the node that links to peers, the inbox that
/// takes what they send (and owns the sync sessions' timers), and mDNS
/// discovery feeding the node.
final class PeerNetwork: Sendable {
    /// The DNS-SD service type.
    static let serviceType = "_sweeper._tcp"
    /// The port used when `--listen` is not given.
    static let defaultPort = 7455
    /// How many ports from ``defaultPort`` on are tried when it is taken (by
    /// another user's daemon on the same computer, say).
    static let portsTried = 64

    let node: PeerNode
    let inbox: PeerInbox
    let discovery: AvahiDiscovery?
    /// Where the node listens, as text.
    let listening: [String]
    private let name: String
    private let identity: PeerID
    private let logger: Logger

    private init(
        node: PeerNode, inbox: PeerInbox, discovery: AvahiDiscovery?, listening: [String], name: String, identity: PeerID,
        logger: Logger
    ) {
        self.node = node
        self.inbox = inbox
        self.discovery = discovery
        self.listening = listening
        self.name = name
        self.identity = identity
        self.logger = logger
    }

    /// Binds the listeners and prepares the node (with `inbox` as its
    /// delegate) and discovery; they run as services afterwards. Without
    /// `--listen` it listens on `preferredPort` (the port it listened on
    /// before), else on the first free port from ``defaultPort`` on, so
    /// static peers' `HOST:PORT` stay valid across restarts. The node runs
    /// on the service's event loop, so peers' messages reach the service in
    /// the call that read them. It dials the static peers of `settings` and
    /// the peers of `book` met before.
    static func start(
        settings: DaemonSettings, identity: SigningIdentity, policy: CircleMembers.LinkPolicy, inbox: PeerInbox, book: PeerBook,
        preferredPort: Int? = nil, eventLoop: any EventLoop, logger: Logger
    ) async throws -> PeerNetwork {
        let circle = policy.current
        var configuration = PeerNodeConfiguration()
        configuration.protocolVersion = PeerCapabilities.currentVersion
        let node = PeerNode(
            credentials: NodeCredentials(
                circle: circle, identity: identity, name: settings.name, earlierKeys: policy.earlier, refused: policy.refused,
                members: policy.members, invitations: policy.invitations),
            configuration: configuration, delegate: inbox, eventLoop: eventLoop, logger: logger)
        var bound: [SocketAddress] = []
        if settings.listen.isEmpty {
            let range = defaultPort..<(defaultPort + portsTried)
            var candidates = Array(range)
            if let preferredPort, (1...65535).contains(preferredPort) {
                candidates.removeAll { $0 == preferredPort }
                candidates.insert(preferredPort, at: 0)
            }
            var lastError: (any Error)?
            for port in candidates where bound.isEmpty {
                do {
                    bound = try await node.listen(on: [("::", port)])
                } catch {
                    lastError = error
                }
            }
            if bound.isEmpty {
                logger.notice(
                    "ports \(range.lowerBound)–\(range.upperBound - 1) are taken; listening on another",
                    metadata: ["error": "\(lastError.map { "\($0)" } ?? "")"])
                bound = try await node.listen(on: [("::", 0)])
            } else if let port = bound.first?.port, port != defaultPort, port != preferredPort {
                logger.notice("port \(defaultPort) is taken; listening on \(port), and on it again after a restart")
            }
        } else {
            for text in settings.listen {
                guard let endpoint = HostPort(text) else { continue }
                bound += try await node.listen(on: [(endpoint.host, endpoint.port)])
            }
        }
        // Static peers, and peers met before at the address they listen on
        // (but an IPv6 link-local one kept without its interface: it cannot be dialled).
        for (text, known) in settings.peers.map({ ($0, PeerID?.none) }) + book.addresses() {
            guard let peer = HostPort(text), !LinkLocalAddress.isUnscoped(peer.host) else { continue }
            await node.addStaticPeer(host: peer.host, port: peer.port, knownAs: known)
        }
        let listening = bound.map(\.hostPortText)
        var discovery: AvahiDiscovery?
        if settings.mdns, let port = bound.first?.port {
            discovery = AvahiDiscovery(
                serviceType: serviceType,
                announcement: announcement(name: settings.name, peer: identity.peerID, circle: circle, port: port),
                logger: logger)
        }
        return PeerNetwork(
            node: node, inbox: inbox, discovery: discovery, listening: listening, name: settings.name, identity: identity.peerID,
            logger: logger)
    }

    /// What mDNS publishes: "NAME on HOST" with the protocol version, peer
    /// id, circle tag and player name in TXT. A DNS label holds 63 bytes, so
    /// the instance name is cut there, on a character boundary.
    static func announcement(name: String, peer: PeerID, circle: CircleKey, port: Int) -> ServiceAnnouncement {
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "localhost"
        return ServiceAnnouncement(
            instanceName: PlayerName.cleaned("\(name) on \(host)", limit: 63), port: UInt16(clamping: port),
            txt: ["v": "\(PeerCapabilities.currentVersion)", "id": peer.description, "circle": circle.tag, "name": PlayerName.cleaned(name)])
    }

    /// The services to run: the node, the inbox's timers, and discovery.
    var services: [any Service] {
        var list: [any Service] = [node, PeerInboxService(inbox: inbox)]
        if let discovery { list.append(DiscoveryService(discovery: discovery, node: node, logger: logger)) }
        return list
    }

    /// The mDNS state for `status`.
    var mdnsStatus: String {
        guard let discovery else { return "disabled" }
        return discovery.status.description
    }

    /// The number of peers linked now.
    func connectedCount() async -> Int { await node.connectedCount }

    /// Dials `endpoint` from now on, like `--peer`.
    func connect(_ endpoint: HostPort) async {
        await node.addStaticPeer(host: endpoint.host, port: endpoint.port)
    }

    /// How every peer the node knows stands, this circle's first (then,
    /// with `all`, daemons of other circles).
    func peers(all: Bool) async -> [PeerStanding] {
        let lags = await inbox.standings.lags()
        return await node.snapshot(includeOtherCircles: all).map { p in inbox.standings.standing(p, lag: p.linkID.flatMap { lags[$0] }) }
    }

    /// How `endpoint`, dialled by address, stands now; nil when it is not.
    func staticDial(_ endpoint: HostPort) async -> StaticDial? {
        await node.staticDial(host: endpoint.host, port: endpoint.port)
    }

    /// Static peers whose last dial failed, for `peers --all`.
    func unreached() async -> [UnreachedPeer] {
        await node.unreachedStaticPeers()
    }

    /// After the circle's membership changed: the node links by the new
    /// policy (a removed device's link closes) and mDNS publishes the
    /// current key's tag.
    func membershipChanged(_ policy: CircleMembers.LinkPolicy) async {
        let before = await node.circle
        await node.membershipChanged(
            circle: policy.current, earlierKeys: policy.earlier, refused: policy.refused, members: policy.members, invitations: policy.invitations)
        if policy.current != before, let discovery, let port = await node.listeningAddresses.first?.port {
            discovery.update(Self.announcement(name: name, peer: identity, circle: policy.current, port: port))
            logger.notice("the circle has a new key", metadata: ["circle": "\(policy.current.tag)"])
        }
    }

    /// Asks a member of an invitation's circle to admit this device: at
    /// `address` when given, else every daemon mDNS sees and the static peers.
    /// A message the member sends before its answer that does not decode
    /// ends that member's try.
    func redeem(_ secret: InvitationSecret, address: HostPort?, waiting: Duration = .zero) async -> AdmissionAnswer {
        await node.redeem(secret, address: address.map { ($0.host, $0.port) }, waiting: waiting) { message in
            (try? PeerMessage(type: message.type, body: message.body)) != nil
        }
    }

    /// The membership records among the messages a member sent before it
    /// admitted this device, in order.
    static func membershipRecords(_ messages: [ApplicationMessage]) -> [[UInt8]] {
        messages.flatMap { message -> [[UInt8]] in
            guard case .membership(let records)? = try? PeerMessage(type: message.type, body: message.body) else { return [] }
            return records
        }
    }

    /// After `join`: links move to the new circle and mDNS publishes its tag.
    func circleChanged(to circle: CircleKey) async {
        await node.changeCircle(circle)
        if let discovery, let port = await node.listeningAddresses.first?.port {
            discovery.update(Self.announcement(name: name, peer: identity, circle: circle, port: port))
        }
    }
}

/// Runs the sync sessions' anti-entropy and head signing until shutdown.
struct PeerInboxService: Service {
    let inbox: PeerInbox

    func run() async throws {
        await cancelWhenGracefulShutdown { await inbox.run() }
        // Stopping: the heads of this player's live pushes go out while the links are up.
        await inbox.signHeads()
    }
}

/// Runs mDNS and turns its sightings into the node's dial targets.
struct DiscoveryService: Service {
    let discovery: AvahiDiscovery
    let node: PeerNode
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await discovery.run() }
                group.addTask {
                    var instances: [String: PeerID] = [:]
                    /// Instances whose record was dropped, each logged once.
                    var dropped: Set<String> = []
                    for await event in discovery.events {
                        switch event {
                        case .found(let record):
                            switch Self.sighting(record) {
                            case .success(let sighting):
                                instances[record.instanceName] = sighting.peer
                                await node.sighted(sighting)
                            case .failure(let refusal):
                                if dropped.insert(record.instanceName).inserted {
                                    logger.debug(
                                        "dropped an mDNS record", metadata: ["instance": "\(record.instanceName)", "why": "\(refusal)"])
                                }
                            }
                        case .lost(let name):
                            if let peer = instances.removeValue(forKey: name) { await node.sightingLost(peer) }
                        case .status:
                            break
                        }
                    }
                }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// Why a resolved record is no daemon to dial.
    enum SightingRefusal: Error, Equatable, CustomStringConvertible {
        /// Its `v` is missing or not a version number: not a Sweeper record.
        case noVersion
        /// Its `id` is missing or not a peer id.
        case noPeerID

        var description: String {
            switch self {
            case .noVersion: "its TXT has no protocol version v"
            case .noPeerID: "its TXT has no valid peer id"
            }
        }
    }

    /// A sighting from a resolved record. A record needs a protocol version
    /// `v` (a number from 1; a version above this daemon's is dialled all
    /// the same: the handshake has not changed, and the hellos tell each
    /// side the other's version) and a valid `id`. IPv6 link-local
    /// addresses are dialled with the interface they were seen on as their
    /// scope, and skipped without one.
    static func sighting(_ record: ServiceRecord) -> Result<PeerSighting, SightingRefusal> {
        guard let version = record.txt["v"].flatMap({ UInt8($0) }), version >= 1 else { return .failure(.noVersion) }
        guard let idText = record.txt["id"], let peer = try? PeerID(parsing: idText) else { return .failure(.noPeerID) }
        var addresses: [SocketAddress] = []
        for a in record.addresses {
            if a.isLinkLocal {
                guard a.interfaceIndex > 0 else { continue }
                var raw = sockaddr_in6()
                raw.sin6_family = sa_family_t(AF_INET6)
                raw.sin6_port = in_port_t(record.port).bigEndian
                guard inet_pton(AF_INET6, a.ip, &raw.sin6_addr) == 1 else { continue }
                raw.sin6_scope_id = UInt32(a.interfaceIndex)
                addresses.append(SocketAddress(raw, host: a.ip))
            } else if let address = try? SocketAddress(ipAddress: a.ip, port: Int(record.port)) {
                addresses.append(address)
            }
        }
        // IPv4 first: they need no scope and are what most home networks route.
        addresses.sort { ($0.protocol == .inet ? 0 : 1) < ($1.protocol == .inet ? 0 : 1) }
        return .success(
            PeerSighting(peer: peer, name: record.txt["name"] ?? record.instanceName, circleTag: record.txt["circle"] ?? "", addresses: addresses))
    }
}
