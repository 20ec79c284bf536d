import Dispatch
import FoundationEssentials
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ServiceLifecycle
import SweeperCrypto
import SweeperEventLoop

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The peer side of a daemon: it listens, dials static and discovered
/// peers with capped exponential backoff, runs the secret handshake, keeps
/// exactly one link per pair of peers, and hands each link's sync messages
/// to its delegate. Run it as a `Service`.
public actor PeerNode: Service {
    private(set) var credentials: NodeCredentials
    let identity: SigningIdentity
    let configuration: PeerNodeConfiguration
    /// How often each link pings, by how many links there are.
    nonisolated let pace: KeepAlivePace
    let logger: Logger
    /// The loop the node's channels, their handlers, its own state and its tasks run on.
    private let eventLoop: any EventLoop
    private let taskExecutor: EventLoopTaskExecutor
    let delegate: any PeerNodeDelegate

    private struct LinkRecord {
        var handle: PeerLinkHandle
        var channel: any Channel
        var initiatedLocally: Bool
        var roundTrip: Duration?
        /// Whether the peer's hello said it understands ``LinkMessage/links(_:)``.
        var speaksLinks = false
    }

    private var links: [UInt64: LinkRecord] = [:]
    /// What the node knows of peers and sightings.
    var directory: PeerDirectory
    private(set) var staticTargets: [String: PeerID?] = [:]
    private var nextLinkID: UInt64 = 1
    private var servers: [any Channel] = []
    private var failureLog = RateLimitedLog()
    /// Incoming connections in their handshake.
    private var handshakes: HandshakeSlots<any Channel>
    /// Static targets' last failed dial, by `host:port`.
    var unreached: [String: (reason: String, at: Date)] = [:]
    /// Static peers `connect` asked for again: their dial loops dial now.
    var dialNow: Set<String> = []
    private let work: AsyncStream<Work>.Continuation
    private let workStream: AsyncStream<Work>
    /// The addresses the node listens on, once bound.
    public private(set) var listeningAddresses: [SocketAddress] = []

    enum Work: Sendable {
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
        self.directory = PeerDirectory(ownID: credentials.identity.peerID)
        self.handshakes = HandshakeSlots(limit: configuration.handshakeLimit, perAddress: configuration.handshakeLimitPerAddress)
        self.credentials = credentials
        self.identity = credentials.identity
        self.configuration = configuration
        pace = KeepAlivePace(configuration)
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
        credentials.earlierKeys = []
        credentials.refused = []
        credentials.members = nil
        credentials.invitations = [:]
        for link in links.values { link.channel.close(promise: nil) }
        // Sort every daemon seen so far again: members of the new circle
        // are dialled, members of the old one become another circle's.
        for peer in directory.circleChanged(to: circle.tag) { work.yield(.dialPeer(peer)) }
    }

    /// Takes the circle's keys and removed devices after its membership
    /// changed: a new current key (after a removal), the earlier keys still
    /// accepted, and the removed devices, whose links close now and which
    /// are never linked again. Links with members stay up.
    public func membershipChanged(
        circle: CircleKey, earlierKeys: [CircleKey], refused: Set<PeerID>, members: Set<PeerID>?, invitations: [PeerID: CircleKey] = [:]
    ) {
        credentials.invitations = invitations
        credentials.circle = circle
        credentials.earlierKeys = earlierKeys
        credentials.refused = refused
        credentials.members = members
        for link in links.values where !credentials.admits(link.handle.peer) {
            logger.notice("closing the link of a device that is not in the circle", metadata: ["peer": "\(link.handle.peer.shortDescription)"])
            link.channel.close(promise: nil)
        }
        for peer in directory.circleChanged(to: credentials.tags, refused: refused) { work.yield(.dialPeer(peer)) }
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
                .bind(host: host, port: port) { [configuration, pace] channel in
                    LinkChannel.configure(channel, configuration, pace)
                }
            servers.append(server.channel)
            if let address = server.channel.localAddress { bound.append(address) }
            work.yield(.accept(server))
        }
        listeningAddresses += bound
        return bound
    }

    /// Dials `host:port` now and whenever the link drops (with backoff),
    /// until the node stops. The peer's identity is learnt in the handshake;
    /// `knownAs` names the peer met there before, so that it is dialled as
    /// mDNS dials: the smaller id first, and by one loop at a time.
    public func addStaticPeer(host: String, port: Int, knownAs peer: PeerID? = nil) {
        let key = hostPortText(host: host, port: port)
        // Known already (and backing off, or linked): dial now, its last failure forgotten.
        guard staticTargets[key] == nil else { return dialAgainNow(key) }
        staticTargets[key] = .some(peer)
        work.yield(.dialStatic(host: host, port: port))
    }

    // MARK: Inspection

    /// Every known peer, this circle's first, then (with `includeOtherCircles`)
    /// daemons of other circles seen on the network.
    public func snapshot(includeOtherCircles: Bool = false) -> [PeerSnapshot] {
        var live: [PeerID: PeerDirectory.LinkInfo] = [:]
        let now = NIODeadline.now()
        let wall = Date()
        for link in links.values {
            // What the link last read, on the wall clock (nil before its first message).
            let heard = link.handle.heard.withLockedValue { $0 }
            live[link.handle.peer] = PeerDirectory.LinkInfo(
                id: link.handle.id, roundTrip: link.roundTrip,
                heard: heard.uptimeNanoseconds == 0 ? nil : wall.addingTimeInterval(-Double((now - heard).nanoseconds) / 1e9))
        }
        return directory.snapshot(links: live, includeOtherCircles: includeOtherCircles)
    }

    /// Tells the delegate how `peer` stands now.
    func tellChanged(_ peer: PeerID) {
        if let snapshot = snapshot().first(where: { $0.id == peer }) { delegate.peerChanged(snapshot) }
    }

    /// The number of links up.
    public var connectedCount: Int { links.count }

    /// How many incoming connections from `ip` are in their handshake.
    func handshakesInFlight(from ip: String) -> Int { handshakes.count(from: ip) }

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
                        group.addTask { _ = await self.runLink(channel, role: .server, key: nil, expected: nil, origin: .incoming) }
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

    func enqueue(_ item: Work) { work.yield(item) }

    func backoff(_ failures: Int) -> Duration {
        let base = Double(configuration.backoffBase.components.seconds) + Double(configuration.backoffBase.components.attoseconds) / 1e18
        let cap = Double(configuration.backoffCap.components.seconds)
        let seconds = min(cap, base * pow(2, Double(min(failures, configuration.backoffDoublingLimit)))) * Double.random(in: 0.8...1.2)
        return .milliseconds(Int(seconds * 1000))
    }

    /// Where a dial goes.
    enum DialTarget {
        /// A host name or address and port (`--peer`, `connect`, a peer met before).
        case host(String, port: Int)
        /// An address mDNS resolved.
        case address(SocketAddress)
    }

    /// Connects to `target` with the node's pipeline; the one place the node dials.
    nonisolated func dial(_ target: DialTarget) async throws -> LinkChannel {
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(configuration.connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
        let configuration = self.configuration, pace = self.pace
        switch target {
        case .host(let host, let port):
            return try await bootstrap.connect(host: host, port: port) { LinkChannel.configure($0, configuration, pace) }
        case .address(let address):
            return try await bootstrap.connect(to: address) { LinkChannel.configure($0, configuration, pace) }
        }
    }

    func staticPeer(_ key: String) -> PeerID? { staticTargets[key] ?? nil }
    func setStaticPeer(_ key: String, _ peer: PeerID) {
        staticTargets[key] = .some(peer)
        unreached[key] = nil
    }
    func noteUnreached(_ key: String, _ reason: String) { unreached[key] = (reason, Date()) }

    func isConnected(_ peer: PeerID) -> Bool { links.values.contains { $0.handle.peer == peer } }

    /// The key to dial `peer` with: the one whose tag it announces (a member
    /// that missed a new key announces an earlier one), else the current one.
    private func dialKey(for peer: PeerID) -> CircleKey {
        directory.sightedTag(of: peer).flatMap(credentials.key(tagged:)) ?? credentials.circle
    }

    private func dialPlan(_ peer: PeerID) -> (addresses: [SocketAddress], sighted: Bool, gossiped: [SocketAddress])? { directory.dialPlan(peer) }
    func setDialing(_ peer: PeerID, _ inFlight: Bool) { directory.setDialing(peer, inFlight: inFlight) }

    /// Takes the dial of `peer` for the calling loop; false while it is
    /// linked or another loop dials it (a static address, mDNS and a
    /// member's address note may all name one peer: two dials at once
    /// would make two links, and the second closes the first).
    func claimDial(_ peer: PeerID) -> Bool {
        guard !isConnected(peer), !directory.dialsInFlight.contains(peer) else { return false }
        directory.setDialing(peer, inFlight: true)
        return true
    }
    private func stopDialling(_ peer: PeerID) { directory.stopDialling(peer) }

    private nonisolated func dialPeerLoop(_ peer: PeerID) async {
        if peerID > peer { try? await Task.sleep(for: configuration.largerIDDialDelay) }
        var failures = 0
        while !Task.isCancelled {
            if await isConnected(peer) {
                try? await Task.sleep(for: configuration.linkedRecheckInterval)
                continue
            }
            guard let plan = await dialPlan(peer), plan.sighted else {
                await stopDialling(peer)
                return
            }
            guard await claimDial(peer) else {
                try? await Task.sleep(for: configuration.linkedRecheckInterval)
                continue
            }
            var established = false
            for address in plan.addresses where !Task.isCancelled {
                do {
                    let channel = try await dial(.address(address))
                    let origin: PeerOrigin = plan.gossiped.contains(address) ? .gossip : .mdns
                    if await runLink(channel, role: .client, key: await dialKey(for: peer), expected: peer, origin: origin) != nil {
                        established = true
                        break
                    }
                } catch {
                    await logFailure(address.hostPortText, "dial failed: \(error)")
                }
            }
            await setDialing(peer, false)
            if !established { await noteDialFailed(peer) }
            failures = established ? 0 : failures + 1
            try? await Task.sleep(for: await backoff(failures))
        }
    }

    /// Logs a connection failure, at most once a minute per `key` (the
    /// address dialled, or the IP address a connection came from).
    func logFailure(_ key: String, _ message: String, remote: String? = nil) {
        failureLog.log(logger, key: key, "\(message)", metadata: ["remote": "\(remote ?? key)"])
    }

    /// Takes a handshake slot for `channel`, closing the stalled handshake
    /// it pushes out, if any (``HandshakeSlots``).
    private func admitHandshake(from ip: String, channel: any Channel) -> UInt64 {
        let (ticket, evicted) = handshakes.take(from: ip, holder: channel)
        if let evicted {
            let remote = evicted.remoteAddress?.hostPortText ?? ip
            failureLog.log(logger, key: ip, "a stalled handshake made room for a newer one", metadata: ["remote": "\(remote)"])
            evicted.close(promise: nil)
        }
        return ticket
    }
    private func releaseHandshake(_ ticket: UInt64) { handshakes.give(back: ticket) }

    /// Runs one connection: handshake, registration, then messages until it
    /// closes. Returns the peer when the handshake succeeded.
    ///
    /// Once the link is up, its messages never pass through this task: the
    /// link's handler hands each one to ``handle(_:on:)`` on the loop, in
    /// the call that read it. This task only waits for the end.
    /// - Parameter key: the circle key a dialling side proves (nil: the
    ///   current one); an accepting side takes the current key or an earlier one.
    nonisolated func runLink(
        _ link: LinkChannel, role: SecretHandshake.Role, key: CircleKey?, expected: PeerID?, origin: PeerOrigin, staticTarget: String? = nil
    ) async -> PeerID? {
        let raw = link.channel
        let remote = raw.remoteAddress.map(\.hostPortText) ?? "unknown"
        // Incoming connections come from ever-new ports: their complaints are
        // rate-limited per IP address, dials per address dialled.
        let logKey = role == .server ? (raw.remoteAddress?.ipAddress ?? remote) : remote
        let ticket = role == .server ? await admitHandshake(from: logKey, channel: raw) : nil
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
        let invitationLink = NIOLockedValueBox(false)
        // Who the handshake proved, also when the link is not taken (a duplicate, a device refused).
        let proven = NIOLockedValueBox<PeerID?>(nil)
        let peer: PeerID?
        do {
            peer = try await withTaskCancellationHandler {
                try await raw.eventLoop.flatSubmit {
                    let handler = link.handler.value
                    let heard = handler.heard
                    return handler.start(
                        SecretHandshake(
                            role: role, circle: key ?? credentials.circle, identity: credentials.identity, expectedPeer: expected,
                            alsoAccepting: credentials.earlierKeys + (role == .server ? Array(credentials.invitations.values) : []))
                    ) { [configuration = self.configuration] keys in
                        established.withLockedValue { $0 = true }
                        proven.withLockedValue { $0 = keys.peer }
                        LinkChannel.watchSilence(raw, self.pace)
                        if role == .server, let proven = keys.circle, let invitation = credentials.invitation(provenBy: proven) {
                            invitationLink.withLockedValue { $0 = true }
                            // It lives for one request: a device that says nothing (pings keep a
                            // link from going silent) does not hold the connection open.
                            raw.eventLoop.scheduleTask(in: configuration.handshakeTimeout) { raw.close(promise: nil) }
                            let asked = NIOLockedValueBox(false)
                            return PeerLinkHandler.Delivery(application: nil) { message in
                                self.assumeIsolated {
                                    $0.admit(message, from: keys.peer, invitation: invitation, channel: raw, remote: remote, asked: asked)
                                }
                            }
                        }
                        return self.assumeIsolated { node in
                            guard
                                let (up, receiver) = node.linkUp(
                                    keys.peer, initiatedLocally: role == .client, origin: origin, remote: remote, channel: raw,
                                    heard: heard)
                            else { return nil }
                            handle.withLockedValue { $0 = up }
                            return PeerLinkHandler.Delivery(application: receiver) { message in
                                self.assumeIsolated { $0.handle(message, on: up) }
                            }
                        }
                    }
                }.get()
            } onCancel: {
                raw.close(promise: nil)
            }
        } catch {
            if let ticket { await releaseHandshake(ticket) }
            let reason: any Error = timedOut.withLockedValue({ $0 }) ? PeerConnectionError.handshakeTimedOut : error
            await logFailure(logKey, "handshake failed: \(reason)", remote: remote)
            if let staticTarget { await noteUnreached(staticTarget, UnreachedPeer.explain(reason)) }
            return nil
        }
        if let ticket { await releaseHandshake(ticket) }
        guard let peer, let up = handle.withLockedValue({ $0 }) else {
            // An invitation link lives until its answer is sent; anything else was refused.
            if !invitationLink.withLockedValue({ $0 }) { logger.debug("closing a duplicate link", metadata: ["remote": "\(remote)"]) }
            // The address reached `peer`, linked (or linking) another way: the static target is that peer. A device refused is not.
            if let staticTarget, let peer = peer ?? proven.withLockedValue({ $0 }) {
                if credentials.admits(peer) {
                    await setStaticPeer(staticTarget, peer)
                } else {
                    await noteUnreached(staticTarget, "refused: not in this circle")
                }
            }
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
        await unregister(up, reason: failure.map { "\($0)" })
        return peer
    }

    /// Registers a link whose handshake just succeeded, on the loop, before
    /// any of its messages is read: the delegate is told (and says where the
    /// link's application messages go), and the peer gets this node's hello.
    /// Returns nil, to close it, when the link duplicates a preferred one or
    /// the node is stopping.
    private func linkUp(
        _ peer: PeerID, initiatedLocally: Bool, origin: PeerOrigin, remote: String, channel: any Channel,
        heard: NIOLockedValueBox<NIODeadline>
    ) -> (PeerLinkHandle, LinkReceiver)? {
        if !credentials.admits(peer) {
            // Once a minute per device, from whichever address it comes.
            logFailure("\(peer) refused", "refused a device that is not in the circle (\(peer.shortDescription))", remote: remote)
            return nil
        }
        guard
            !stopped,
            let link = register(peer: peer, initiatedLocally: initiatedLocally, origin: origin, remote: remote, channel: channel, heard: heard)
        else { return nil }
        let listenPort = listeningAddresses.first?.port ?? 0
        link.send(.hello(PeerHello(protocolVersion: configuration.protocolVersion, listenPort: UInt16(clamping: listenPort), name: credentials.name)))
        let receiver = delegate.linkEstablished(link)
        tellChanged(peer)
        return (link, receiver)
    }

    /// Handles one transport message of a link, on the loop, as its frame
    /// is read (its application messages go to the delegate's receiver).
    private func handle(_ message: LinkMessage, on link: PeerLinkHandle) {
        switch message {
        case .ping:
            break  // the link's handler answered it
        case .pong(let token):
            noteRoundTrip(link.id, token)
        case .links(let peers):
            link.reported.withLockedValue { $0 = Set(peers) }
        case .hello(let hello):
            noteHello(link, hello)
            let dialBack = PeerDirectory.dialBack(ip: link.channel.remoteAddress?.ipAddress, listenPort: hello.listenPort)
            delegate.helloReceived(hello, dialBack: dialBack, on: link)
            tellChanged(link.peer)
        case .application:
            break  // the link's handler handed it to the delegate's receiver
        case .admission, .admitted, .refused:
            // Only an invitation link carries these: on a member's link they are malformed.
            logFailure("\(link.peer) admission", "dropping a peer that sent an invitation message on its link", remote: link.peer.shortDescription)
            link.close()
        }
    }

    /// Adds a link, keeping one per peer: of two links between the same
    /// pair, the one dialled by the smaller peer id stays (both sides agree);
    /// of two dialled the same way, the newer stays.
    private func register(
        peer: PeerID, initiatedLocally: Bool, origin: PeerOrigin, remote: String, channel: any Channel, heard: NIOLockedValueBox<NIODeadline>
    ) -> PeerLinkHandle? {
        let smallerDials = peerID < peer
        if let existing = links.values.first(where: { $0.handle.peer == peer }) {
            let newPreferred = initiatedLocally == smallerDials
            let existingPreferred = existing.initiatedLocally == smallerDials
            if existingPreferred && !newPreferred { return nil }
            existing.channel.close(promise: nil)
            unregister(existing.handle)
        }
        let handle = PeerLinkHandle(
            id: nextLinkID, peer: peer, channel: channel, reported: NIOLockedValueBox([]), version: NIOLockedValueBox(0), heard: heard)
        nextLinkID += 1
        links[handle.id] = LinkRecord(handle: handle, channel: channel, initiatedLocally: initiatedLocally)
        pace.setLinks(links.count)
        directory.linked(peer, origin: origin, remote: remote)
        logger.info("peer linked", metadata: ["peer": "\(peer.shortDescription)", "remote": "\(remote)", "via": "\(origin.rawValue)"])
        announceLinks()
        return handle
    }

    /// Removes a link and tells the delegate, once per link.
    /// The log says why, when the link failed or the application closed it
    /// with a reason (a malformed message): every time, past the rate limit
    /// of the failure's own line.
    private func unregister(_ handle: PeerLinkHandle, reason: String? = nil) {
        guard links[handle.id] != nil else { return }
        links[handle.id] = nil
        pace.setLinks(links.count)
        directory.unlinked(handle.peer)
        var metadata: Logger.Metadata = ["peer": "\(handle.peer.shortDescription)"]
        if let why = handle.closeReason.withLockedValue({ $0 }) ?? reason { metadata["reason"] = "\(why)" }
        logger.info("peer unlinked", metadata: metadata)
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
        directory.named(link.peer, hello.name)
        link.version.withLockedValue { $0 = hello.protocolVersion }
        if hello.protocolVersion >= PeerHello.linksVersion, links[link.id]?.speaksLinks == false {
            links[link.id]?.speaksLinks = true
            link.send(.links(linkedPeers(except: link.peer)))
        }
    }

    private func noteDialFailed(_ peer: PeerID) { directory.dialFailed(peer) }
}
