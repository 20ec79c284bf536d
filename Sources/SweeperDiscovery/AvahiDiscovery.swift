import CAvahi
import FoundationEssentials
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What this daemon announces on the network.
public struct ServiceAnnouncement: Sendable, Equatable {
    /// The readable instance name, such as "alice on kitchen-pc". Avahi
    /// picks an alternative ("… #2") on a collision.
    public var instanceName: String
    /// The TCP port peers dial.
    public var port: UInt16
    /// TXT record entries (`key=value`).
    public var txt: [String: String]

    /// Creates an announcement.
    public init(instanceName: String, port: UInt16, txt: [String: String]) {
        self.instanceName = instanceName
        self.port = port
        self.txt = txt
    }
}

/// A resolved address of a service instance.
public struct ResolvedAddress: Sendable, Hashable {
    /// The address as text, without a scope.
    public var ip: String
    /// Whether it is IPv6.
    public var isIPv6: Bool
    /// The interface it was seen on (the scope of a link-local address).
    public var interfaceIndex: Int32

    /// Whether it is an IPv6 link-local address, which needs its interface to be dialled.
    public var isLinkLocal: Bool { isIPv6 && ip.lowercased().hasPrefix("fe80") }
}

/// A service instance found on the network.
public struct ServiceRecord: Sendable, Equatable {
    /// Its instance name.
    public var instanceName: String
    /// The host it runs on.
    public var hostName: String
    /// Where it listens, one entry per interface and protocol it was resolved on.
    public var addresses: [ResolvedAddress]
    /// Its port.
    public var port: UInt16
    /// Its TXT record.
    public var txt: [String: String]
}

extension ServiceRecord {
    /// One TXT record string as sent by anyone on the network: `key=value`
    /// (at most 255 bytes read, as UTF-8 with bad bytes replaced), or nil
    /// without an `=`.
    static func txtEntry(_ bytes: some Collection<UInt8>) -> (key: String, value: String)? {
        let string = String(decoding: bytes.prefix(255), as: UTF8.self)
        guard let eq = string.firstIndex(of: "=") else { return nil }
        return (String(string[..<eq]), String(string[string.index(after: eq)...]))
    }

    /// A TXT record's strings, in the order they came, as a dictionary by
    /// key: keys are compared without case and stored lower-cased, and the
    /// first of several strings with one key wins (RFC 6763 §6.4); strings
    /// without `=` or with an empty key are passed over.
    static func txtEntries(_ strings: [[UInt8]]) -> [String: String] {
        var entries: [String: String] = [:]
        for string in strings {
            guard let (key, value) = txtEntry(string), !key.isEmpty else { continue }
            let lower = key.lowercased()
            if entries[lower] == nil { entries[lower] = value }
        }
        return entries
    }
}

/// What discovery reports.
public enum DiscoveryEvent: Sendable, Equatable {
    /// An instance was resolved (again: addresses accumulate per instance).
    case found(ServiceRecord)
    /// An instance went away.
    case lost(instanceName: String)
    /// Discovery's own state changed.
    case status(DiscoveryStatus)
}

/// Whether mDNS works right now.
public enum DiscoveryStatus: Sendable, Equatable, CustomStringConvertible {
    /// Not started, or stopped.
    case stopped
    /// Waiting for avahi-daemon.
    case unavailable(String)
    /// Published under this name and browsing.
    case running(publishedAs: String)

    public var description: String {
        switch self {
        case .stopped: "stopped"
        case .unavailable(let why): "unavailable (\(why))"
        case .running(let name): "running as \"\(name)\""
        }
    }
}

/// mDNS over avahi-client: publishes one service, browses and resolves the
/// same type, and reports sightings as one async stream.
///
/// Threading follows Avahi's rules: a threaded poll runs the client; every
/// call from outside it holds the poll's lock; callbacks run on the poll
/// thread with the lock already held and take no lock. C callbacks reach
/// this object through an unretained pointer that stays valid until
/// ``stop()`` has freed the client.
///
/// When avahi-daemon is not running, or goes away and comes back, the client
/// waits in the connecting state (`AVAHI_CLIENT_NO_FAIL`) and publishes again
/// by itself; if the D-Bus connection itself fails, ``run()`` makes a new
/// client every few seconds.
public final class AvahiDiscovery: Sendable {
    /// The DNS-SD service type.
    public let serviceType: String
    private let logger: Logger
    /// Sightings and status changes, in order.
    public let events: AsyncStream<DiscoveryEvent>
    private let continuation: AsyncStream<DiscoveryEvent>.Continuation
    private let state: Mutex<State>

    /// Poll-thread state. Touched only with the poll lock held (inside
    /// callbacks, or by Swift code that took the lock).
    private final class Core: @unchecked Sendable {
        var poll: OpaquePointer?
        var client: OpaquePointer?
        var group: OpaquePointer?
        var browser: OpaquePointer?
        /// Live resolvers by interface, protocol and instance name: they
        /// report again when a record changes (a new TXT after `join`).
        var resolvers: [String: OpaquePointer] = [:]
        var announcement: ServiceAnnouncement
        var publishedName: String
        var failed = false
        init(_ a: ServiceAnnouncement) {
            announcement = a
            publishedName = a.instanceName
        }
    }

    private struct State: @unchecked Sendable {
        var status: DiscoveryStatus = .stopped
        var records: [String: ServiceRecord] = [:]
    }

    private let core: Core

    /// Creates discovery for `serviceType` (such as `_sweeper._tcp`) that
    /// will publish `announcement` once started.
    public init(serviceType: String, announcement: ServiceAnnouncement, logger: Logger) {
        self.serviceType = serviceType
        self.logger = logger
        core = Core(announcement)
        state = Mutex(State())
        (events, continuation) = AsyncStream<DiscoveryEvent>.makeStream()
    }

    /// The current status.
    public var status: DiscoveryStatus { state.withLock { $0.status } }

    /// Starts, then keeps mDNS going until the task is cancelled, making a
    /// new client whenever the old one has failed; stops on cancellation.
    public func run() async {
        start()
        var backoff = ReconnectBackoff()
        while !Task.isCancelled {
            try? await Task.sleep(for: backoff.wait)
            if Task.isCancelled { break }
            let failed = needsRestart()
            switch backoff.look(failed: failed) {
            // Reached again is said when it publishes (``setStatus(_:)``): a new client may still be connecting.
            case .none, .back: break
            case .lost, .retrying: logger.debug("mdns: trying avahi again", metadata: ["attempt": "\(backoff.failures)"])
            }
            if failed {
                stop(finishing: false)
                start()
            }
        }
        stop()
    }

    /// Changes what is published (for example after joining another circle).
    public func update(_ announcement: ServiceAnnouncement) {
        withPollLock {
            let sameService = announcement.instanceName == core.announcement.instanceName && announcement.port == core.announcement.port
            core.announcement = announcement
            if sameService, let group = core.group, avahi_entry_group_is_empty(group) == 0 {
                // Only the TXT changes: update it in place, so browsers' live
                // resolvers see the new record under the same name.
                var list: UnsafeMutablePointer<AvahiStringList>? = nil
                for (key, value) in announcement.txt.sorted(by: { $0.key < $1.key }) {
                    list = avahi_string_list_add(list, "\(key)=\(value)")
                }
                defer { avahi_string_list_free(list) }
                let result = avahi_entry_group_update_service_txt_strlst(
                    group, AvahiIfIndex(sweeper_avahi_if_unspec), AvahiProtocol(sweeper_avahi_proto_unspec), AvahiPublishFlags(0),
                    core.publishedName, serviceType, nil, list)
                if result >= 0 { return }
            }
            core.publishedName = announcement.instanceName
            if let group = core.group { avahi_entry_group_reset(group) }
            publish()
        }
    }

    // MARK: Life cycle

    private func start() {
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        guard let poll = avahi_threaded_poll_new() else {
            setStatus(.unavailable("cannot make an avahi poll"))
            return
        }
        core.poll = poll
        core.failed = false
        var error: Int32 = 0
        let client = avahi_client_new(
            avahi_threaded_poll_get(poll), AVAHI_CLIENT_NO_FAIL,
            { client, clientState, userdata in
                guard let userdata else { return }
                let me = Unmanaged<AvahiDiscovery>.fromOpaque(UnsafeRawPointer(userdata)).takeUnretainedValue()
                me.clientChanged(client, clientState)
            },
            UnsafeMutableRawPointer(userdata), &error)
        guard let client else {
            setStatus(.unavailable(Self.message(error)))
            core.failed = true
            return
        }
        core.client = client
        if avahi_threaded_poll_start(poll) < 0 {
            setStatus(.unavailable("cannot start the avahi poll thread"))
            core.failed = true
        }
    }

    /// Withdraws the service and frees everything.
    public func stop() { stop(finishing: true) }

    private func stop(finishing: Bool) {
        if let poll = core.poll {
            avahi_threaded_poll_stop(poll)
            // The poll thread has stopped: nothing else touches the core now.
            if let client = core.client { avahi_client_free(client) }  // frees its groups, browsers, resolvers
            avahi_threaded_poll_free(poll)
        } else if let client = core.client {
            avahi_client_free(client)
        }
        core.poll = nil
        core.client = nil
        core.group = nil
        core.browser = nil
        core.resolvers = [:]
        if finishing {
            setStatus(.stopped)
            continuation.finish()
        }
    }

    private func needsRestart() -> Bool {
        withPollLock { core.failed || core.client == nil }
    }

    private func withPollLock<R>(_ body: () -> R) -> R {
        guard let poll = core.poll else { return body() }
        avahi_threaded_poll_lock(poll)
        defer { avahi_threaded_poll_unlock(poll) }
        return body()
    }

    private func setStatus(_ status: DiscoveryStatus) {
        let before = state.withLock { s -> DiscoveryStatus? in
            guard s.status != status else { return nil }
            defer { s.status = status }
            return s.status
        }
        guard let before else { return }
        switch status {
        // Once per reason: ``run()`` tries again quietly, less and less often.
        case .unavailable(let why) where Self.isOutOfReach(why): logger.warning("\(ReconnectBackoff.remedy(why))")
        // Reached, but publishing or browsing failed: nothing to install.
        case .unavailable(let why): logger.warning("mdns: unavailable (\(why)); peers given by address still work")
        case .running(let name):
            if case .unavailable = before { logger.notice("mdns: reached avahi-daemon again", metadata: ["name": "\(name)"]) }
            logger.info("mdns: published", metadata: ["name": "\(name)"])
        case .stopped: break
        }
        continuation.yield(.status(status))
    }

    /// Whether `why` says avahi-daemon could not be reached (what the
    /// remedy is for), not that publishing or browsing failed once reached.
    private static func isOutOfReach(_ why: String) -> Bool {
        !(why.hasPrefix("cannot make an entry group") || why.hasPrefix("cannot publish") || why.hasPrefix("publishing failed")
            || why.hasPrefix("cannot browse") || why.hasPrefix("browsing failed"))
    }

    private static func message(_ error: Int32) -> String {
        guard let text = avahi_strerror(error) else { return "error \(error)" }
        return String(cString: text)
    }

    // MARK: Callbacks (poll thread, lock held)

    private func clientChanged(_ client: OpaquePointer?, _ clientState: AvahiClientState) {
        switch clientState {
        case AVAHI_CLIENT_S_RUNNING:
            core.client = client
            publish()
            browse()
        case AVAHI_CLIENT_S_COLLISION, AVAHI_CLIENT_S_REGISTERING:
            // The host name changed or collided: withdraw until running again.
            if let group = core.group { avahi_entry_group_reset(group) }
        case AVAHI_CLIENT_CONNECTING:
            dropObjects()
            setStatus(.unavailable("avahi-daemon is not running"))
        case AVAHI_CLIENT_FAILURE:
            dropObjects()
            let why = client.map { Self.message(avahi_client_errno($0)) } ?? "failure"
            setStatus(.unavailable(why))
            core.failed = true
        default:
            break
        }
    }

    private func dropObjects() {
        for resolver in core.resolvers.values { avahi_service_resolver_free(resolver) }
        core.resolvers = [:]
        if let browser = core.browser { avahi_service_browser_free(browser) }
        if let group = core.group { avahi_entry_group_free(group) }
        core.browser = nil
        core.group = nil
        let lost = state.withLock { s -> [String] in
            defer { s.records = [:] }
            return Array(s.records.keys)
        }
        for name in lost { continuation.yield(.lost(instanceName: name)) }
    }

    private func publish() {
        guard let client = core.client, avahi_client_get_state(client) == AVAHI_CLIENT_S_RUNNING else { return }
        let userdata = UnsafeMutableRawPointer(Unmanaged.passUnretained(self).toOpaque())
        if core.group == nil {
            core.group = avahi_entry_group_new(
                client,
                { group, groupState, userdata in
                    guard let userdata else { return }
                    let me = Unmanaged<AvahiDiscovery>.fromOpaque(UnsafeRawPointer(userdata)).takeUnretainedValue()
                    me.groupChanged(group, groupState)
                }, userdata)
        }
        guard let group = core.group else {
            setStatus(.unavailable("cannot make an entry group: \(Self.message(avahi_client_errno(client)))"))
            return
        }
        guard avahi_entry_group_is_empty(group) != 0 else { return }
        var list: UnsafeMutablePointer<AvahiStringList>? = nil
        for (key, value) in core.announcement.txt.sorted(by: { $0.key < $1.key }) {
            list = avahi_string_list_add(list, "\(key)=\(value)")
        }
        defer { avahi_string_list_free(list) }
        let result = avahi_entry_group_add_service_strlst(
            group, AvahiIfIndex(sweeper_avahi_if_unspec), AvahiProtocol(sweeper_avahi_proto_unspec), AvahiPublishFlags(0),
            core.publishedName, serviceType, nil, nil, core.announcement.port, list)
        if result == AVAHI_ERR_COLLISION {
            renameAfterCollision()
            return
        }
        guard result >= 0, avahi_entry_group_commit(group) >= 0 else {
            setStatus(.unavailable("cannot publish: \(Self.message(result < 0 ? result : avahi_client_errno(client)))"))
            return
        }
    }

    private func renameAfterCollision() {
        if let alternative = avahi_alternative_service_name(core.publishedName) {
            core.publishedName = String(cString: alternative)
            avahi_free(alternative)
        }
        logger.notice("mdns: name collision, publishing as \"\(core.publishedName)\"")
        if let group = core.group { avahi_entry_group_reset(group) }
        publish()
    }

    private func groupChanged(_ group: OpaquePointer?, _ groupState: AvahiEntryGroupState) {
        switch groupState {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            setStatus(.running(publishedAs: core.publishedName))
        case AVAHI_ENTRY_GROUP_COLLISION:
            renameAfterCollision()
        case AVAHI_ENTRY_GROUP_FAILURE:
            let why = core.client.map { Self.message(avahi_client_errno($0)) } ?? "failure"
            setStatus(.unavailable("publishing failed: \(why)"))
        default:
            break
        }
    }

    private func browse() {
        guard core.browser == nil, let client = core.client else { return }
        let userdata = UnsafeMutableRawPointer(Unmanaged.passUnretained(self).toOpaque())
        core.browser = avahi_service_browser_new(
            client, AvahiIfIndex(sweeper_avahi_if_unspec), AvahiProtocol(sweeper_avahi_proto_unspec), serviceType, nil,
            AvahiLookupFlags(0),
            { _, interface, proto, event, name, type, domain, _, userdata in
                guard let userdata else { return }
                let me = Unmanaged<AvahiDiscovery>.fromOpaque(UnsafeRawPointer(userdata)).takeUnretainedValue()
                me.browsed(interface, proto, event, name, type, domain)
            }, userdata)
        if core.browser == nil {
            setStatus(.unavailable("cannot browse: \(Self.message(avahi_client_errno(client)))"))
        }
    }

    private func browsed(
        _ interface: AvahiIfIndex, _ proto: AvahiProtocol, _ event: AvahiBrowserEvent,
        _ name: UnsafePointer<CChar>?, _ type: UnsafePointer<CChar>?, _ domain: UnsafePointer<CChar>?
    ) {
        guard let client = core.client else { return }
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let name else { return }
            let key = "\(interface)/\(proto)/\(String(cString: name))"
            guard core.resolvers[key] == nil else { return }
            let userdata = UnsafeMutableRawPointer(Unmanaged.passUnretained(self).toOpaque())
            // The resolver stays: it answers again whenever the record changes.
            let resolver = avahi_service_resolver_new(
                client, interface, proto, name, type, domain, AvahiProtocol(sweeper_avahi_proto_unspec), AvahiLookupFlags(0),
                { resolver, interface, _, event, name, _, _, host, address, port, txt, _, userdata in
                    guard let userdata else { return }
                    let me = Unmanaged<AvahiDiscovery>.fromOpaque(UnsafeRawPointer(userdata)).takeUnretainedValue()
                    guard event == AVAHI_RESOLVER_FOUND, let name, let address else {
                        me.resolverFailed(resolver)
                        return
                    }
                    me.resolved(interface, String(cString: name), host.map { String(cString: $0) } ?? "", address, port, txt)
                }, userdata)
            if let resolver { core.resolvers[key] = resolver }
        case AVAHI_BROWSER_REMOVE:
            guard let name else { return }
            let instance = String(cString: name)
            let key = "\(interface)/\(proto)/\(instance)"
            if let resolver = core.resolvers.removeValue(forKey: key) { avahi_service_resolver_free(resolver) }
            let existed = state.withLock { $0.records.removeValue(forKey: instance) != nil }
            if existed { continuation.yield(.lost(instanceName: instance)) }
        case AVAHI_BROWSER_FAILURE:
            setStatus(.unavailable("browsing failed: \(Self.message(avahi_client_errno(client)))"))
        default:
            break
        }
    }

    /// A resolver that failed (timeout, or the record went away) is freed;
    /// the browser makes a new one if the service shows up again.
    private func resolverFailed(_ resolver: OpaquePointer?) {
        guard let resolver else { return }
        if let key = core.resolvers.first(where: { $0.value == resolver })?.key { core.resolvers[key] = nil }
        avahi_service_resolver_free(resolver)
    }

    private func resolved(
        _ interface: AvahiIfIndex, _ name: String, _ host: String, _ address: UnsafePointer<AvahiAddress>, _ port: UInt16,
        _ txt: UnsafeMutablePointer<AvahiStringList>?
    ) {
        var buffer = [CChar](repeating: 0, count: Int(AVAHI_ADDRESS_STR_MAX))
        avahi_address_snprint(&buffer, buffer.count, address)
        let ip = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let resolved = ResolvedAddress(ip: ip, isIPv6: address.pointee.proto == AvahiProtocol(sweeper_avahi_proto_inet6), interfaceIndex: interface)
        var strings: [[UInt8]] = []
        var item = txt
        while let node = item, strings.count < 64 {
            if let text = avahi_string_list_get_text(node) {
                strings.append(Array(UnsafeBufferPointer(start: text, count: Int(avahi_string_list_get_size(node)))))
            }
            item = avahi_string_list_get_next(node)
        }
        let entries = ServiceRecord.txtEntries(strings)
        let record = state.withLock { s -> ServiceRecord in
            var r = s.records[name] ?? ServiceRecord(instanceName: name, hostName: host, addresses: [], port: port, txt: entries)
            r.hostName = host
            r.port = port
            r.txt = entries
            if !r.addresses.contains(resolved) { r.addresses.append(resolved) }
            s.records[name] = r
            return r
        }
        continuation.yield(.found(record))
    }
}
