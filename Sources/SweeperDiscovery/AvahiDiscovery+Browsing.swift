import CAvahi
import FoundationEssentials

/// Where the browser saw an instance: what a resolve of it needs.
struct BrowsedInstance {
    var interface: AvahiIfIndex
    var proto: AvahiProtocol
    var name: String
    var type: String
    var domain: String
}

extension AvahiDiscovery {
    /// Resolves `instanceName` again, once, wherever the browser saw it: for
    /// a peer that is not linked, whose address may have changed since it
    /// was resolved (a resolver is not left open to hear of that).
    public func resolveAgain(instanceName: String) {
        withPollLock {
            for (key, instance) in core.instances where instance.name == instanceName { resolve(key) }
        }
    }

    // MARK: Callbacks and what they call (poll thread, lock held)

    func browse() {
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
            guard let name, let type, let domain else { return }
            let key = "\(interface)/\(proto)/\(String(cString: name))"
            guard core.instances[key] == nil else { return }
            core.instances[key] = BrowsedInstance(
                interface: interface, proto: proto, name: String(cString: name), type: String(cString: type), domain: String(cString: domain))
            resolve(key)
            watchTXT(key)
        case AVAHI_BROWSER_REMOVE:
            guard let name else { return }
            let instance = String(cString: name)
            let key = "\(interface)/\(proto)/\(instance)"
            core.instances[key] = nil
            if let resolver = core.resolvers.removeValue(forKey: key) { avahi_service_resolver_free(resolver) }
            if let browser = core.txtBrowsers.removeValue(forKey: key) { avahi_record_browser_free(browser) }
            let existed = state.withLock { $0.records.removeValue(forKey: instance) != nil }
            if existed { continuation.yield(.lost(instanceName: instance)) }
        case AVAHI_BROWSER_FAILURE:
            setStatus(.unavailable("browsing failed: \(Self.message(avahi_client_errno(client)))"))
        default:
            break
        }
    }

    /// Starts one resolve of the instance at `key`, unless one is under way.
    private func resolve(_ key: String) {
        guard core.resolvers[key] == nil, let client = core.client, let instance = core.instances[key] else { return }
        let userdata = UnsafeMutableRawPointer(Unmanaged.passUnretained(self).toOpaque())
        let resolver = avahi_service_resolver_new(
            client, instance.interface, instance.proto, instance.name, instance.type, instance.domain,
            AvahiProtocol(sweeper_avahi_proto_unspec), AvahiLookupFlags(0),
            { resolver, interface, _, event, name, _, _, host, address, port, txt, _, userdata in
                guard let userdata else { return }
                let me = Unmanaged<AvahiDiscovery>.fromOpaque(UnsafeRawPointer(userdata)).takeUnretainedValue()
                if event == AVAHI_RESOLVER_FOUND, let name, let address {
                    me.resolved(interface, String(cString: name), host.map { String(cString: $0) } ?? "", address, port, txt)
                }
                me.resolverDone(resolver)
            }, userdata)
        if let resolver { core.resolvers[key] = resolver }
    }

    /// A resolver that answered, or failed (a timeout, or the record went
    /// away), is freed: the TXT browser and ``resolveAgain(instanceName:)``
    /// take it from there, and the service browser if the instance shows up again.
    private func resolverDone(_ resolver: OpaquePointer?) {
        guard let resolver else { return }
        if let key = core.resolvers.first(where: { $0.value == resolver })?.key { core.resolvers[key] = nil }
        avahi_service_resolver_free(resolver)
    }

    /// Watches the TXT record of the instance at `key`.
    private func watchTXT(_ key: String) {
        guard core.txtBrowsers[key] == nil, let client = core.client, let instance = core.instances[key] else { return }
        var full = [CChar](repeating: 0, count: Int(AVAHI_DOMAIN_NAME_MAX))
        guard avahi_service_name_join(&full, full.count, instance.name, instance.type, instance.domain) >= 0 else { return }
        let userdata = UnsafeMutableRawPointer(Unmanaged.passUnretained(self).toOpaque())
        let browser = avahi_record_browser_new(
            client, instance.interface, instance.proto, full, UInt16(sweeper_avahi_dns_class_in), UInt16(sweeper_avahi_dns_type_txt),
            AvahiLookupFlags(0),
            { browser, _, _, event, _, _, _, rdata, size, _, userdata in
                guard let userdata, event == AVAHI_BROWSER_NEW, let rdata else { return }
                let me = Unmanaged<AvahiDiscovery>.fromOpaque(UnsafeRawPointer(userdata)).takeUnretainedValue()
                me.txtSeen(browser, ServiceRecord.txtStrings(UnsafeRawBufferPointer(start: rdata, count: size)))
            }, userdata)
        if let browser { core.txtBrowsers[key] = browser }
    }

    /// A TXT record of a resolved instance: reported when it differs from
    /// the one held (a TXT that comes before the instance is resolved is
    /// the resolve's to bring).
    private func txtSeen(_ browser: OpaquePointer?, _ strings: [[UInt8]]) {
        guard let browser, let key = core.txtBrowsers.first(where: { $0.value == browser })?.key, let instance = core.instances[key]
        else { return }
        let entries = ServiceRecord.txtEntries(strings)
        let changed = state.withLock { s -> ServiceRecord? in
            guard var r = s.records[instance.name], r.txt != entries else { return nil }
            r.txt = entries
            s.records[instance.name] = r
            return r
        }
        if let changed { continuation.yield(.found(changed)) }
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

extension ServiceRecord {
    /// The strings of a TXT record's data as it comes on the wire (each a
    /// length byte and that many bytes), at most 64 of them; a string that
    /// runs past the end is cut there.
    static func txtStrings(_ data: UnsafeRawBufferPointer) -> [[UInt8]] {
        var strings: [[UInt8]] = []
        var at = 0
        while at < data.count, strings.count < 64 {
            let length = Int(data[at])
            let end = min(data.count, at + 1 + length)
            strings.append(Array(data[(at + 1)..<end]))
            at = end
        }
        return strings
    }
}
