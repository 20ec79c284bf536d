import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ServiceLifecycle
import SweeperCrypto

/// This daemon's credentials on the network.
public struct NodeCredentials: Sendable {
    /// The circle whose members it talks to.
    public var circle: CircleKey
    /// Its identity.
    public var identity: SigningIdentity
    /// Its player name, sent to peers in the hello.
    public var name: String

    /// Creates credentials.
    public init(circle: CircleKey, identity: SigningIdentity, name: String) {
        self.circle = circle
        self.identity = identity
        self.name = name
    }
}

/// Limits and timings of peer connections.
public struct PeerNodeConfiguration: Sendable {
    /// The largest frame accepted (bytes of ciphertext).
    public var frameLimit = 16 << 20
    /// The largest frame accepted before the link is up (handshake messages
    /// are 64 and 112 bytes, the stream header 24).
    public var handshakeFrameLimit = 1024
    /// The most incoming connections in their handshake at once; more are
    /// closed at once, so strangers cannot hold many sockets open.
    public var handshakeLimit = 64
    /// The most incoming connections in their handshake at once from one
    /// IP address, so one host cannot take every slot.
    public var handshakeLimitPerAddress = 8
    /// How long a handshake may take.
    public var handshakeTimeout: TimeAmount = .seconds(10)
    /// How long a peer may stay silent before the link is dropped.
    public var idleTimeout: TimeAmount = .seconds(30)
    /// How often a keep-alive is sent.
    public var pingInterval: Duration = .seconds(10)
    /// The first reconnect delay; it doubles per failure up to ``backoffCap``, with ±20% jitter.
    public var backoffBase: Duration = .milliseconds(500)
    /// The longest reconnect delay.
    public var backoffCap: Duration = .seconds(30)
    /// How many bytes may wait to be sent on one link before new sync
    /// messages are dropped (anti-entropy repairs what a drop loses).
    public var sendBufferLimit = 64 << 20

    /// The defaults.
    public init() {}
}

/// How a peer became known.
public enum PeerOrigin: String, Sendable, Codable, Comparable {
    /// Found by mDNS.
    case mdns
    /// Given by `--peer`, the config file or `sweeper connect`.
    case `static`
    /// It connected to us.
    case incoming

    public static func < (a: PeerOrigin, b: PeerOrigin) -> Bool { a.rawValue < b.rawValue }
}

/// Where a known peer stands.
public enum PeerLinkState: String, Sendable, Codable {
    /// A link is up.
    case connected
    /// A dial is under way.
    case connecting
    /// Seen on the network, no link yet.
    case discovered
    /// Known, but neither seen nor linked now.
    case offline
}

/// An established link as the sync layer sees it.
public struct PeerLinkHandle: Sendable, Hashable {
    /// Unique for the life of the node.
    public let id: UInt64
    /// The peer at the other end.
    public let peer: PeerID
    let channel: any Channel
    let reported: NIOLockedValueBox<Set<PeerID>>

    /// The peers this peer last said it is linked to (``PeerMessage/links(_:)``);
    /// empty until it says, and always for peers of protocol version 1.
    public var reportedLinks: Set<PeerID> { reported.withLockedValue { $0 } }

    /// Sends a sync message to the peer; never blocks. On the link's event
    /// loop the message is sealed and handed to the socket at once; from
    /// elsewhere it is sent in the loop's next turn. While more than
    /// ``PeerNodeConfiguration/sendBufferLimit`` bytes wait to be sent, the
    /// message is dropped (anti-entropy repairs the loss).
    public func send(sync bytes: [UInt8]) {
        guard channel.isWritable else { return }
        send(.sync(bytes))
    }

    /// Sends any message.
    func send(_ message: PeerMessage) {
        channel.writeAndFlush(message, promise: nil)
    }

    /// Drops the link (a peer that sent something malformed).
    public func close() {
        channel.close(promise: nil)
    }

    public static func == (a: PeerLinkHandle, b: PeerLinkHandle) -> Bool { a.id == b.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// What the sync layer does with links.
///
/// Every call comes on the node's event loop, synchronously, from the
/// code that read the message off the socket; so they must not block, and
/// work that waits belongs in a task of its own. Calls for one link come
/// in order: established, any number of received and hellos, closed.
public protocol PeerNodeDelegate: Sendable {
    /// A link to a peer is up (after the handshake); none of its messages
    /// is handed on before this returns.
    func linkEstablished(_ link: PeerLinkHandle)
    /// A sync message arrived; the link's next frame is read when this returns.
    func received(sync bytes: [UInt8], on link: PeerLinkHandle)
    /// The link is gone.
    func linkClosed(_ link: PeerLinkHandle)
    /// The peer introduced itself; `dialBack` is its address and listening
    /// port (`host:port`), when it listens.
    func helloReceived(_ hello: PeerHello, dialBack: String?, on link: PeerLinkHandle)
    /// What `sweeper peers` shows of a peer of this circle changed (a link
    /// came up or closed, a hello gave its name): its snapshot now, after
    /// the node's own state was updated.
    func peerChanged(_ snapshot: PeerSnapshot)
}

extension PeerNodeDelegate {
    /// Ignores hellos.
    public func helloReceived(_ hello: PeerHello, dialBack: String?, on link: PeerLinkHandle) {}
    /// Ignores changes of peers' state.
    public func peerChanged(_ snapshot: PeerSnapshot) {}
}

/// A connection as the node holds it: the channel, its protocol handler
/// (touched only on the channel's loop) and when it ended.
struct LinkChannel: Sendable {
    let channel: any Channel
    let handler: NIOLoopBound<PeerLinkHandler>
    /// Completes when the connection closes, with the error that closed it.
    let ended: EventLoopFuture<(any Error)?>
}

/// One known peer, as `sweeper peers` shows it.
public struct PeerSnapshot: Sendable {
    /// The peer's identity.
    public var id: PeerID
    /// Its player name, from its hello or its mDNS record.
    public var name: String?
    /// Addresses it was seen or linked at.
    public var addresses: [String]
    /// Where it stands.
    public var state: PeerLinkState
    /// How it became known (the first way first).
    public var origins: [PeerOrigin]
    /// When anything was last heard from it.
    public var lastSeen: Date?
    /// The last keep-alive round trip.
    public var roundTrip: Duration?
    /// The link, when connected.
    public var linkID: UInt64?
    /// Its circle tag, when seen by mDNS.
    public var circleTag: String?
    /// Whether it belongs to another circle (seen, never linked).
    public var otherCircle: Bool
}

/// A sighting of a daemon on the network, from mDNS.
public struct PeerSighting: Sendable, Equatable {
    /// The daemon's identity (from its TXT record).
    public var peer: PeerID
    /// Its player name.
    public var name: String
    /// Its circle tag.
    public var circleTag: String
    /// Where it listens.
    public var addresses: [SocketAddress]

    /// Creates a sighting.
    public init(peer: PeerID, name: String, circleTag: String, addresses: [SocketAddress]) {
        self.peer = peer
        self.name = name
        self.circleTag = circleTag
        self.addresses = addresses
    }
}

/// The peer side of a daemon: it listens, dials static and discovered
/// peers with capped exponential backoff, runs the secret handshake, keeps
/// exactly one link per pair of peers, and hands each link's sync messages
/// to its delegate. Run it as a `Service`.
public actor PeerNode: Service {
    private var credentials: NodeCredentials
    private let identity: SigningIdentity
    private let configuration: PeerNodeConfiguration
    private let logger: Logger
    /// The loop the node's channels, their handlers, its own state and its tasks run on.
    private let eventLoop: any EventLoop
    private let taskExecutor: EventLoopTaskExecutor
    private let delegate: any PeerNodeDelegate

    private struct LinkRecord {
        var handle: PeerLinkHandle
        var channel: any Channel
        var initiatedLocally: Bool
        var roundTrip: Duration?
        /// Whether the peer's hello said it understands ``PeerMessage/links(_:)``.
        var speaksLinks = false
    }

    private struct PeerRecord {
        var name: String?
        var addresses: [String] = []
        var origins: [PeerOrigin] = []
        var lastSeen: Date?
        var sightedAddresses: [SocketAddress] = []
        var sighted = false
        var dialing = false
        var circleTag: String?
    }

    private struct ForeignRecord {
        var sighting: PeerSighting
        var lastSeen: Date
    }

    private var links: [UInt64: LinkRecord] = [:]
    private var peers: [PeerID: PeerRecord] = [:]
    private var foreign: [PeerID: ForeignRecord] = [:]
    /// The last mDNS sighting of every daemon, of any circle, so a change of
    /// circle can sort them again.
    private var sightings: [PeerID: PeerSighting] = [:]
    private var staticTargets: [String: PeerID?] = [:]
    private var nextLinkID: UInt64 = 1
    private var servers: [any Channel] = []
    private var failureLog = RateLimitedLog()
    /// Incoming connections in their handshake, by remote IP address.
    private var handshakesInFlight: [String: Int] = [:]
    private let work: AsyncStream<Work>.Continuation
    private let workStream: AsyncStream<Work>
    /// The addresses the node listens on, once bound.
    public private(set) var listeningAddresses: [SocketAddress] = []

    private enum Work: Sendable {
        case accept(NIOAsyncChannel<LinkChannel, Never>)
        case inbound(LinkChannel)
        case dialStatic(host: String, port: Int)
        case dialPeer(PeerID)
    }

    /// Creates a node on `eventLoop`: its channels, its state (the actor's
    /// executor is the loop) and, once it runs, its dialling and link tasks use
    /// that loop's thread. Links' messages go to `delegate`. Call
    /// ``listen(on:)``, then run it.
    public init(
        credentials: NodeCredentials, configuration: PeerNodeConfiguration = PeerNodeConfiguration(),
        delegate: any PeerNodeDelegate, eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next(), logger: Logger
    ) {
        self.delegate = delegate
        self.credentials = credentials
        self.identity = credentials.identity
        self.configuration = configuration
        self.eventLoop = eventLoop
        self.taskExecutor = EventLoopTaskExecutor(eventLoop)
        self.logger = logger
        (workStream, work) = AsyncStream<Work>.makeStream()
    }

    /// This node's identity.
    public nonisolated var peerID: PeerID { identity.peerID }

    /// The node's state is kept on its event loop.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { eventLoop.executor.asUnownedSerialExecutor() }

    /// The circle this node talks in.
    public var circle: CircleKey { credentials.circle }

    /// Moves the node to another circle (after `join`): every link closes,
    /// and new handshakes prove the new key. Sightings of the old circle's
    /// members become sightings of another circle.
    public func changeCircle(_ circle: CircleKey) {
        guard circle != credentials.circle else { return }
        credentials.circle = circle
        for link in links.values { link.channel.close(promise: nil) }
        // Sort every daemon seen so far again: members of the new circle
        // are dialled, members of the old one become another circle's.
        for sighting in sightings.values { sighted(sighting) }
    }

    // MARK: Listening and dialling

    /// Binds a listener on each `host:port` (port 0 picks one). Returns the
    /// bound addresses. Connections are accepted once the node runs.
    @discardableResult
    public func listen(on endpoints: [(host: String, port: Int)]) async throws -> [SocketAddress] {
        var bound: [SocketAddress] = []
        for (host, port) in endpoints {
            let server = try await ServerBootstrap(group: eventLoop)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .bind(host: host, port: port) { [configuration] channel in
                    Self.configure(channel, configuration)
                }
            servers.append(server.channel)
            if let address = server.channel.localAddress { bound.append(address) }
            work.yield(.accept(server))
        }
        listeningAddresses += bound
        return bound
    }

    /// Dials `host:port` now and whenever the link drops (with backoff),
    /// until the node stops. The peer's identity is learnt in the handshake.
    public func addStaticPeer(host: String, port: Int) {
        let key = "\(host):\(port)"
        guard staticTargets[key] == nil else { return }
        staticTargets[key] = .some(nil)
        work.yield(.dialStatic(host: host, port: port))
    }

    /// Records an mDNS sighting: a member of this circle is dialled (the
    /// peer with the smaller id first, so both rarely dial at once); a
    /// daemon of another circle is only remembered, for `peers --all`.
    public func sighted(_ sighting: PeerSighting) {
        guard sighting.peer != peerID else { return }
        sightings[sighting.peer] = sighting
        guard sighting.circleTag == credentials.circle.tag else {
            foreign[sighting.peer] = ForeignRecord(sighting: sighting, lastSeen: Date())
            peers[sighting.peer]?.sighted = false
            return
        }
        foreign[sighting.peer] = nil
        var record = peers[sighting.peer] ?? PeerRecord()
        record.name = record.name ?? sighting.name
        record.circleTag = sighting.circleTag
        record.sighted = true
        record.lastSeen = Date()
        record.sightedAddresses = sighting.addresses
        for a in sighting.addresses.map(\.hostPortText) where !record.addresses.contains(a) { record.addresses.append(a) }
        if !record.origins.contains(.mdns) { record.origins.append(.mdns) }
        let startDialling = !record.dialing
        record.dialing = true
        peers[sighting.peer] = record
        if startDialling { work.yield(.dialPeer(sighting.peer)) }
    }

    /// Records that mDNS no longer sees `peer`.
    public func sightingLost(_ peer: PeerID) {
        foreign[peer] = nil
        sightings[peer] = nil
        peers[peer]?.sighted = false
    }

    // MARK: Inspection

    /// Every known peer, this circle's first, then (with `includeOtherCircles`)
    /// daemons of other circles seen on the network.
    public func snapshot(includeOtherCircles: Bool = false) -> [PeerSnapshot] {
        var out: [PeerSnapshot] = []
        for (id, record) in peers {
            let link = links.values.first { $0.handle.peer == id }
            let state: PeerLinkState =
                link != nil ? .connected : dialsInFlight.contains(id) ? .connecting : record.sighted ? .discovered : .offline
            out.append(PeerSnapshot(
                id: id, name: record.name, addresses: record.addresses, state: state, origins: record.origins,
                lastSeen: record.lastSeen, roundTrip: link?.roundTrip, linkID: link?.handle.id,
                circleTag: record.circleTag, otherCircle: false))
        }
        out.sort { ($0.state == .connected ? 0 : 1, $0.name ?? "", $0.id) < ($1.state == .connected ? 0 : 1, $1.name ?? "", $1.id) }
        if includeOtherCircles {
            for (id, record) in foreign.sorted(by: { $0.key < $1.key }) {
                out.append(PeerSnapshot(
                    id: id, name: record.sighting.name, addresses: record.sighting.addresses.map(\.hostPortText), state: .discovered,
                    origins: [.mdns], lastSeen: record.lastSeen, roundTrip: nil, linkID: nil,
                    circleTag: record.sighting.circleTag, otherCircle: true))
            }
        }
        return out
    }

    /// Tells the delegate how `peer` stands now.
    private func tellChanged(_ peer: PeerID) {
        if let snapshot = snapshot().first(where: { $0.id == peer }) { delegate.peerChanged(snapshot) }
    }

    /// The number of links up.
    public var connectedCount: Int { links.count }

    private var dialsInFlight: Set<PeerID> = []

    // MARK: Service

    /// Accepts and dials until graceful shutdown, then closes every link.
    /// Every link's tasks run on the node's event loop.
    public func run() async throws {
        let stream = workStream
        await withTaskExecutorPreference(taskExecutor) {
            await serve(stream)
        }
    }

    private func serve(_ stream: AsyncStream<Work>) async {
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                for await item in stream {
                    switch item {
                    case .accept(let server):
                        group.addTask { await self.acceptLoop(server) }
                    case .inbound(let channel):
                        group.addTask { _ = await self.runLink(channel, role: .server, expected: nil, origin: .incoming) }
                    case .dialStatic(let host, let port):
                        group.addTask { await self.dialStaticLoop(host: host, port: port) }
                    case .dialPeer(let peer):
                        group.addTask { await self.dialPeerLoop(peer) }
                    }
                }
                group.cancelAll()
            }
        } onGracefulShutdown: {
            Task { await self.shutdown() }
        }
    }

    /// Stops accepting and dialling and closes every link.
    public func shutdown() {
        stopped = true
        work.finish()
        for server in servers { server.close(promise: nil) }
        for link in links.values { link.channel.close(promise: nil) }
    }

    /// Set by ``shutdown()``: no link comes up after it.
    private var stopped = false

    // MARK: Internals

    /// Sets up a connection's pipeline: idle timeout, frames, and the
    /// link's protocol handler.
    static func configure(_ channel: any Channel, _ configuration: PeerNodeConfiguration) -> EventLoopFuture<LinkChannel> {
        channel.eventLoop.makeCompletedFuture {
            let ops = channel.pipeline.syncOperations
            try ops.addHandler(IdleStateHandler(readTimeout: configuration.idleTimeout))
            try ops.addHandler(CloseOnIdleHandler())
            try ops.addHandler(ByteToMessageHandler(
                FrameDecoder(limit: configuration.frameLimit, openingLimit: configuration.handshakeFrameLimit)))
            try ops.addHandler(MessageToByteHandler(FrameEncoder()))
            let handler = PeerLinkHandler(eventLoop: channel.eventLoop, pingInterval: TimeAmount(configuration.pingInterval))
            try ops.addHandler(handler)
            let limit = max(configuration.sendBufferLimit, 2)
            try channel.syncOptions?.setOption(.writeBufferWaterMark, value: ChannelOptions.Types.WriteBufferWaterMark(low: limit / 2, high: limit))
            return LinkChannel(channel: channel, handler: NIOLoopBound(handler, eventLoop: channel.eventLoop), ended: handler.ended)
        }
    }

    private nonisolated func acceptLoop(_ server: NIOAsyncChannel<LinkChannel, Never>) async {
        do {
            try await server.executeThenClose { inbound in
                for try await child in inbound {
                    await self.enqueue(.inbound(child))
                }
            }
        } catch {
            logger.debug("listener closed", metadata: ["error": "\(error)"])
        }
    }

    private func enqueue(_ item: Work) { work.yield(item) }

    private func backoff(_ failures: Int) -> Duration {
        let base = Double(configuration.backoffBase.components.seconds) + Double(configuration.backoffBase.components.attoseconds) / 1e18
        let cap = Double(configuration.backoffCap.components.seconds)
        let seconds = min(cap, base * pow(2, Double(min(failures, 20)))) * Double.random(in: 0.8...1.2)
        return .milliseconds(Int(seconds * 1000))
    }

    private nonisolated func dialStaticLoop(host: String, port: Int) async {
        var failures = 0
        while !Task.isCancelled {
            if let known = await staticPeer("\(host):\(port)"), await isConnected(known) {
                try? await Task.sleep(for: .seconds(1))
                continue
            }
            var established: PeerID?
            do {
                let channel = try await ClientBootstrap(group: eventLoop)
                    .connectTimeout(.seconds(5))
                    .channelOption(.socketOption(.tcp_nodelay), value: 1)
                    .connect(host: host, port: port) { [configuration] channel in Self.configure(channel, configuration) }
                established = await runLink(channel, role: .client, expected: nil, origin: .static)
            } catch {
                await logFailure("\(host):\(port)", "dial failed: \(error)")
            }
            if let established { await setStaticPeer("\(host):\(port)", established) }
            failures = established == nil ? failures + 1 : 0
            try? await Task.sleep(for: await backoff(failures))
        }
    }

    private func staticPeer(_ key: String) -> PeerID? { staticTargets[key] ?? nil }
    private func setStaticPeer(_ key: String, _ peer: PeerID) { staticTargets[key] = .some(peer) }
    private func isConnected(_ peer: PeerID) -> Bool { links.values.contains { $0.handle.peer == peer } }

    private func dialPlan(_ peer: PeerID) -> (addresses: [SocketAddress], sighted: Bool)? {
        guard let record = peers[peer] else { return nil }
        return (record.sightedAddresses, record.sighted)
    }

    private func setDialing(_ peer: PeerID, _ inFlight: Bool) {
        if inFlight { dialsInFlight.insert(peer) } else { dialsInFlight.remove(peer) }
    }

    private func stopDialling(_ peer: PeerID) { peers[peer]?.dialing = false }

    private nonisolated func dialPeerLoop(_ peer: PeerID) async {
        // The larger id waits a little, so that usually only one side dials.
        if peerID > peer { try? await Task.sleep(for: .milliseconds(1500)) }
        var failures = 0
        while !Task.isCancelled {
            if await isConnected(peer) {
                try? await Task.sleep(for: .seconds(1))
                continue
            }
            guard let plan = await dialPlan(peer), plan.sighted else {
                await stopDialling(peer)
                return
            }
            var established = false
            await setDialing(peer, true)
            for address in plan.addresses where !Task.isCancelled {
                do {
                    let channel = try await ClientBootstrap(group: eventLoop)
                        .connectTimeout(.seconds(5))
                        .channelOption(.socketOption(.tcp_nodelay), value: 1)
                        .connect(to: address) { [configuration] channel in Self.configure(channel, configuration) }
                    await setDialing(peer, false)
                    if await runLink(channel, role: .client, expected: peer, origin: .mdns) != nil {
                        established = true
                        break
                    }
                } catch {
                    await logFailure(address.hostPortText, "dial failed: \(error)")
                }
            }
            await setDialing(peer, false)
            failures = established ? 0 : failures + 1
            try? await Task.sleep(for: await backoff(failures))
        }
    }

    /// Logs a connection failure, at most once a minute per `key` (the
    /// address dialled, or the IP address a connection came from).
    private func logFailure(_ key: String, _ message: String, remote: String? = nil) {
        failureLog.log(logger, key: key, "\(message)", metadata: ["remote": "\(remote ?? key)"])
    }

    /// Takes a handshake slot for an incoming connection from `ip`, or says
    /// why there is none (``PeerNodeConfiguration/handshakeLimit`` in all,
    /// ``PeerNodeConfiguration/handshakeLimitPerAddress`` per address).
    private func admitHandshake(from ip: String) -> PeerConnectionError? {
        let total = handshakesInFlight.values.reduce(0, +)
        let fromHere = handshakesInFlight[ip] ?? 0
        if fromHere >= configuration.handshakeLimitPerAddress {
            return .tooManyHandshakes(inFlight: fromHere, limit: configuration.handshakeLimitPerAddress)
        }
        if total >= configuration.handshakeLimit {
            return .tooManyHandshakes(inFlight: total, limit: configuration.handshakeLimit)
        }
        handshakesInFlight[ip] = fromHere + 1
        return nil
    }

    /// Gives back a slot taken by ``admitHandshake(from:)``.
    private func releaseHandshake(from ip: String) {
        guard let n = handshakesInFlight[ip] else { return }
        handshakesInFlight[ip] = n > 1 ? n - 1 : nil
    }

    /// Runs one connection: handshake, registration, then messages until it
    /// closes. Returns the peer when the handshake succeeded.
    ///
    /// Once the link is up, its messages never pass through this task: the
    /// link's handler hands each one to ``handle(_:on:)`` on the loop, in
    /// the call that read it. This task only waits for the end.
    private nonisolated func runLink(_ link: LinkChannel, role: SecretHandshake.Role, expected: PeerID?, origin: PeerOrigin) async -> PeerID? {
        let raw = link.channel
        let remote = raw.remoteAddress.map(\.hostPortText) ?? "unknown"
        // Incoming connections come from ever-new ports: their complaints are
        // rate-limited per IP address, dials per address dialled.
        let logKey = role == .server ? (raw.remoteAddress?.ipAddress ?? remote) : remote
        if role == .server {
            if let refusal = await admitHandshake(from: logKey) {
                await logFailure(logKey, "connection refused: \(refusal)", remote: remote)
                raw.close(promise: nil)
                return nil
            }
        }
        let established = NIOLockedValueBox(false)
        let timedOut = NIOLockedValueBox(false)
        raw.eventLoop.scheduleTask(in: configuration.handshakeTimeout) {
            if !established.withLockedValue({ $0 }) {
                timedOut.withLockedValue { $0 = true }
                raw.close(promise: nil)
            }
        }
        let credentials = await self.credentials
        let handle = NIOLockedValueBox<PeerLinkHandle?>(nil)
        let peer: PeerID?
        do {
            peer = try await withTaskCancellationHandler {
                try await raw.eventLoop.flatSubmit {
                    link.handler.value.start(
                        SecretHandshake(role: role, circle: credentials.circle, identity: credentials.identity, expectedPeer: expected)
                    ) { keys in
                        established.withLockedValue { $0 = true }
                        return self.assumeIsolated { node in
                            guard let up = node.linkUp(
                                keys.peer, initiatedLocally: role == .client, origin: origin, remote: remote, channel: raw)
                            else { return nil }
                            handle.withLockedValue { $0 = up }
                            return { message in self.assumeIsolated { $0.handle(message, on: up) } }
                        }
                    }
                }.get()
            } onCancel: {
                raw.close(promise: nil)
            }
        } catch {
            if role == .server { await releaseHandshake(from: logKey) }
            let reason: any Error = timedOut.withLockedValue({ $0 }) ? PeerConnectionError.handshakeTimedOut : error
            await logFailure(logKey, "handshake failed: \(reason)", remote: remote)
            return nil
        }
        if role == .server { await releaseHandshake(from: logKey) }
        guard let peer, let up = handle.withLockedValue({ $0 }) else {
            logger.debug("closing a duplicate link", metadata: ["remote": "\(remote)"])
            return nil
        }
        let failure = await withTaskCancellationHandler {
            try? await link.ended.get()
        } onCancel: {
            raw.close(promise: nil)
        }
        if let failure {
            await logFailure(logKey, "link dropped: \(failure)", remote: remote)
        }
        await unregister(up)
        return peer
    }

    /// Registers a link whose handshake just succeeded, on the loop, before
    /// any of its messages is read: the delegate is told, and the peer gets
    /// this node's hello. Returns nil, to close it, when the link duplicates
    /// a preferred one or the node is stopping.
    private func linkUp(
        _ peer: PeerID, initiatedLocally: Bool, origin: PeerOrigin, remote: String, channel: any Channel
    ) -> PeerLinkHandle? {
        guard !stopped, let link = register(peer: peer, initiatedLocally: initiatedLocally, origin: origin, remote: remote, channel: channel)
        else { return nil }
        let listenPort = listeningAddresses.first?.port ?? 0
        link.send(.hello(PeerHello(listenPort: UInt16(clamping: listenPort), name: credentials.name)))
        delegate.linkEstablished(link)
        tellChanged(peer)
        return link
    }

    /// Handles one message of a link, on the loop, as its frame is read.
    private func handle(_ message: PeerMessage, on link: PeerLinkHandle) {
        switch message {
        case .ping:
            break  // the link's handler answered it
        case .pong(let token):
            noteRoundTrip(link.id, token)
        case .links(let peers):
            link.reported.withLockedValue { $0 = Set(peers) }
        case .hello(let hello):
            noteHello(link, hello)
            var dialBack: String?
            if hello.listenPort != 0, let ip = link.channel.remoteAddress?.ipAddress {
                dialBack = ip.contains(":") ? "[\(ip)]:\(hello.listenPort)" : "\(ip):\(hello.listenPort)"
            }
            delegate.helloReceived(hello, dialBack: dialBack, on: link)
            tellChanged(link.peer)
        case .sync(let bytes):
            delegate.received(sync: bytes, on: link)
        }
        noteSeen(link.peer)
    }

    /// Adds a link, keeping one per peer: of two links between the same
    /// pair, the one dialled by the smaller peer id stays (both sides agree);
    /// of two dialled the same way, the newer stays.
    private func register(
        peer: PeerID, initiatedLocally: Bool, origin: PeerOrigin, remote: String, channel: any Channel
    ) -> PeerLinkHandle? {
        let smallerDials = peerID < peer
        if let existing = links.values.first(where: { $0.handle.peer == peer }) {
            let newPreferred = initiatedLocally == smallerDials
            let existingPreferred = existing.initiatedLocally == smallerDials
            if existingPreferred && !newPreferred { return nil }
            existing.channel.close(promise: nil)
            unregister(existing.handle)
        }
        let handle = PeerLinkHandle(id: nextLinkID, peer: peer, channel: channel, reported: NIOLockedValueBox([]))
        nextLinkID += 1
        links[handle.id] = LinkRecord(handle: handle, channel: channel, initiatedLocally: initiatedLocally)
        var record = peers[peer] ?? PeerRecord()
        if !record.origins.contains(origin) { record.origins.append(origin) }
        if !record.addresses.contains(remote) && origin != .incoming { record.addresses.append(remote) }
        record.lastSeen = Date()
        peers[peer] = record
        logger.info("peer linked", metadata: ["peer": "\(peer.shortDescription)", "remote": "\(remote)", "via": "\(origin.rawValue)"])
        announceLinks()
        return handle
    }

    /// Removes a link and tells the delegate, once per link.
    private func unregister(_ handle: PeerLinkHandle) {
        guard links[handle.id] != nil else { return }
        links[handle.id] = nil
        peers[handle.peer]?.lastSeen = Date()
        logger.info("peer unlinked", metadata: ["peer": "\(handle.peer.shortDescription)"])
        delegate.linkClosed(handle)
        tellChanged(handle.peer)
        announceLinks()
    }

    /// Tells every peer that understands it whom this node is linked to now.
    private func announceLinks() {
        for link in links.values where link.speaksLinks {
            link.handle.send(.links(linkedPeers(except: link.handle.peer)))
        }
    }

    /// The peers linked now, but `peer`, in order.
    private func linkedPeers(except peer: PeerID) -> [PeerID] {
        links.values.map(\.handle.peer).filter { $0 != peer }.sorted()
    }

    private func noteRoundTrip(_ link: UInt64, _ token: UInt64) {
        let now = DispatchTime.now().uptimeNanoseconds
        guard now >= token else { return }
        links[link]?.roundTrip = .nanoseconds(Int64(now - token))
    }

    private func noteHello(_ link: PeerLinkHandle, _ hello: PeerHello) {
        let name = hello.name.filter { !$0.isNewline && $0 != "\0" }
        if !name.isEmpty { peers[link.peer]?.name = name }
        if hello.protocolVersion >= PeerHello.linksVersion, links[link.id]?.speaksLinks == false {
            links[link.id]?.speaksLinks = true
            link.send(.links(linkedPeers(except: link.peer)))
        }
    }

    private func noteSeen(_ peer: PeerID) { peers[peer]?.lastSeen = Date() }
}

extension SocketAddress {
    /// `ip:port`, or `[ip]:port` for IPv6: how peers' addresses are shown and logged.
    public var hostPortText: String {
        guard let ip = ipAddress, let port else { return "\(self)" }
        return self.protocol == .inet6 ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }
}
