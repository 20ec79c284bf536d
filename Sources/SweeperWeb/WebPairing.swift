import FoundationEssentials
import NIOCore
import SweeperConventions
import SweeperCrypto
import Synchronization

/// A browser paired on the home network: it plays as this daemon's player,
/// or as a player it hosts, until it is revoked. Only a hash of its cookie
/// is kept.
public struct WebDevice: Codable, Sendable, Equatable {
    /// A short id to name it by (`sweeper web revoke ID`).
    public var id: String
    /// What it is, from its browser's own description ("Chrome on Android").
    public var name: String
    /// SHA-256 of its session cookie, hex.
    public var tokenHash: String
    /// When it was paired, in milliseconds since 1970.
    public var pairedMillis: Int64
    /// When it last asked for anything, in milliseconds since 1970.
    public var lastUsedMillis: Int64
    /// The hosted player it plays as, by id (nil: the device's own player).
    public var player: String?

    /// Creates a device record.
    public init(id: String, name: String, tokenHash: String, pairedMillis: Int64, lastUsedMillis: Int64, player: String? = nil) {
        self.id = id
        self.name = name
        self.tokenHash = tokenHash
        self.pairedMillis = pairedMillis
        self.lastUsedMillis = lastUsedMillis
        self.player = player
    }
}

/// Where the paired devices are kept across restarts (the daemon's store).
public protocol WebDeviceKeeper: Sendable {
    /// The devices kept.
    func devices() -> [WebDevice]
    /// Keeps `devices` in place of those kept.
    func keep(_ devices: [WebDevice]) throws
}

/// Pairing browsers on the home network: one-time codes that `sweeper web
/// pair` hands out, guesses limited, and the devices they paired, each
/// with the WebSockets it has open so that revoking it closes them at once.
public final class WebPairing: Sendable {
    /// Why a pairing code was not taken.
    public enum Refusal: Error, Sendable, Equatable {
        /// Unknown, used or expired.
        case badCode
        /// Too many wrong codes lately, from this address or from all:
        /// nothing is checked for a while.
        case rateLimited(seconds: Int)
    }

    private struct State {
        /// Codes handed out, with when each expires and the hosted player it pairs to.
        var codes: [String: (expires: Int64, player: String?)] = [:]
        /// When wrong codes came, by the address they came from (``WebClientAddress``).
        var failures: [String: [Int64]] = [:]
        var devices: [WebDevice]
        var channels: [String: [ObjectIdentifier: any Channel]] = [:]

        /// When `device` was last used: now while it has a WebSocket open
        /// (a board left open for days is in use, though it asks nothing).
        func lastUse(of device: WebDevice, now: Int64) -> Int64 {
            channels[device.id]?.isEmpty == false ? now : device.lastUsedMillis
        }
    }

    /// How long a pairing code works, in milliseconds.
    public static let codeLifetimeMillis: Int64 = 5 * 60 * 1000
    /// The most codes open at once; the oldest goes first. A host adding a
    /// table's worth of players (a code each) keeps every one working;
    /// 24 open codes among 2^40, at ``failureLimitForAll`` guesses a minute
    /// for five minutes, leave a guess one chance in about 10^8.
    public static let codeLimit = 24
    /// The most wrong codes from one address (``WebClientAddress``) in
    /// ``failureWindowMillis`` before every code from it is refused for that
    /// long: a guest guessing does not keep the family from pairing.
    public static let failureLimit = 10
    /// The most wrong codes from every address together in
    /// ``failureWindowMillis`` before every code is refused for that long:
    /// the bound on guessing from many addresses.
    public static let failureLimitForAll = 60
    /// The window of ``failureLimit``.
    public static let failureWindowMillis: Int64 = 60 * 1000
    /// The most devices paired at once.
    public static let deviceLimit = 32
    /// The name of the device cookie.
    public static let cookieName = "sweeper-device"
    /// The symbols of a code: Crockford's base32 (no I, L, O, U).
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    private let state: Mutex<State>
    private let keeper: any WebDeviceKeeper
    private let clock: @Sendable () -> Int64

    /// Pairing over the devices `keeper` holds.
    public init(keeper: any WebDeviceKeeper, clock: @escaping @Sendable () -> Int64 = WebAccess.wallMillis) {
        self.keeper = keeper
        self.clock = clock
        state = Mutex(State(devices: keeper.devices()))
    }

    /// A new one-time code (8 symbols, shown as two groups of four) and when it expires.
    /// `player` (a hosted player's id) is whom the browser will play as
    /// (nil: the device's own player).
    public func issueCode(player: String? = nil) -> (code: String, expiresMillis: Int64) {
        var generator = SystemRandomNumberGenerator()
        let symbols = String((0..<8).map { _ in Self.alphabet[Int.random(in: 0..<32, using: &generator)] })
        let now = clock()
        let expires = now + Self.codeLifetimeMillis
        state.withLock { s in
            s.codes = s.codes.filter { $0.value.expires > now }
            while s.codes.count >= Self.codeLimit, let oldest = s.codes.min(by: { $0.value.expires < $1.value.expires }) { s.codes[oldest.key] = nil }
            s.codes[symbols] = (expires, player)
        }
        return (String(symbols.prefix(4)) + "-" + String(symbols.suffix(4)), expires)
    }

    /// A code as typed, in its canonical symbols: upper case, without
    /// separators, O read as 0 and I or L as 1.
    static func canonical(_ typed: String) -> String {
        String(
            typed.uppercased().compactMap { c -> Character? in
                switch c {
                case "-", " ", "%": return nil
                case "O": return "0"
                case "I", "L": return "1"
                default: return c
                }
            })
    }

    /// Pairs a browser with a code: a new device and its cookie value.
    /// `address` is where the request came from (``WebClientAddress``):
    /// wrong codes count against it, and against every address together.
    public func pair(code typed: String, name: String, from address: String = "") throws(Refusal) -> (device: WebDevice, token: String) {
        let code = Self.canonical(typed)
        let now = clock()
        let token = WebAccess.randomToken()
        let outcome: Result<(WebDevice, evicted: [any Channel]), Refusal> = state.withLock { s in
            s.failures = s.failures.compactMapValues { times in
                let recent = times.filter { $0 > now - Self.failureWindowMillis }
                return recent.isEmpty ? nil : recent
            }
            let all = s.failures.values.joined()
            let own = s.failures[address] ?? []
            for (times, limit) in [(Array(all), Self.failureLimitForAll), (own, Self.failureLimit)] where times.count >= limit {
                let wait = ((times.min() ?? now) + Self.failureWindowMillis - now + 999) / 1000
                return .failure(.rateLimited(seconds: Int(max(1, wait))))
            }
            guard let issued = s.codes.removeValue(forKey: code), issued.expires > now else {
                s.failures[address, default: []].append(now)
                return .failure(.badCode)
            }
            var generator = SystemRandomNumberGenerator()
            let id = String((0..<6).map { _ in Self.alphabet[Int.random(in: 0..<32, using: &generator)] })
            let device = WebDevice(
                id: id, name: String(name.prefix(64)), tokenHash: Self.hash(token), pairedMillis: now, lastUsedMillis: now, player: issued.player)
            s.devices.append(device)
            var evicted: [any Channel] = []
            while s.devices.count > Self.deviceLimit, let oldest = s.devices.min(by: { s.lastUse(of: $0, now: now) < s.lastUse(of: $1, now: now) }) {
                s.devices.removeAll { $0.id == oldest.id }
                evicted += (s.channels.removeValue(forKey: oldest.id) ?? [:]).values
            }
            return .success((device, evicted))
        }
        let (device, evicted) = try outcome.get()
        // A device over the limit is forgotten: what it has open closes with it.
        for channel in evicted { channel.close(promise: nil) }
        try? keeper.keep(devices)
        return (device, token)
    }

    /// The device a cookie value belongs to (marking it used), if any.
    public func device(for token: String) -> WebDevice? {
        let hash = Self.hash(token)
        let now = clock()
        let (found, changed) = state.withLock { s -> (WebDevice?, Bool) in
            guard let i = s.devices.firstIndex(where: { $0.tokenHash == hash }) else { return (nil, false) }
            // Last use is written at most once a minute a device.
            let stale = now - s.devices[i].lastUsedMillis > 60_000
            s.devices[i].lastUsedMillis = now
            return (s.devices[i], stale)
        }
        if changed { try? keeper.keep(devices) }
        return found
    }

    /// The paired devices, most recently used first.
    public var devices: [WebDevice] {
        state.withLock { $0.devices }.sorted { $0.lastUsedMillis > $1.lastUsedMillis }
    }

    /// Revokes the device whose id starts with `prefix` (or whose name is
    /// `prefix`): it is forgotten and its WebSockets close at once. Nil when
    /// none matches or several do.
    public func revoke(_ prefix: String) throws -> WebDevice? {
        let wanted = prefix.uppercased()
        return try forget { devices in
            let matches = devices.filter { $0.id.hasPrefix(wanted) || $0.name == prefix }
            return matches.count == 1 ? matches : []
        }.first
    }

    /// Revokes every device paired to the hosted player `player` (its id):
    /// they are forgotten, their WebSockets close at once, and the codes
    /// handed out for it stop working. Returns the devices revoked.
    @discardableResult
    public func revoke(player: String) throws -> [WebDevice] {
        state.withLock { s in s.codes = s.codes.filter { $0.value.player != player } }
        return try forget { devices in devices.filter { $0.player == player } }
    }

    /// Forgets the devices `chosen` picks and closes their WebSockets at
    /// once; when the store cannot keep that, they are paired again as
    /// they were (the error says the revoking failed, and a restart does
    /// not bring back a device its owner was told is gone).
    private func forget(_ chosen: ([WebDevice]) -> [WebDevice]) throws -> [WebDevice] {
        let (removed, channels) = state.withLock { s -> ([WebDevice], [any Channel]) in
            let removed = chosen(s.devices)
            let ids = Set(removed.map(\.id))
            s.devices.removeAll { ids.contains($0.id) }
            return (removed, removed.flatMap { Array((s.channels.removeValue(forKey: $0.id) ?? [:]).values) })
        }
        guard !removed.isEmpty else { return [] }
        for channel in channels { channel.close(promise: nil) }
        do {
            try keeper.keep(devices)
        } catch {
            state.withLock { s in s.devices += removed.filter { device in !s.devices.contains { $0.id == device.id } } }
            throw error
        }
        return removed
    }

    /// Notes a WebSocket of `device`, closed when the device is revoked
    /// (at once when it was revoked since its cookie was read).
    func track(_ channel: any Channel, device: String) {
        let key = ObjectIdentifier(channel)
        let paired = state.withLock { s in
            guard s.devices.contains(where: { $0.id == device }) else { return false }
            s.channels[device, default: [:]][key] = channel
            return true
        }
        guard paired else { return channel.close(promise: nil) }
        channel.closeFuture.whenComplete { _ in self.untrack(key, device: device) }
    }

    private func untrack(_ key: ObjectIdentifier, device: String) {
        state.withLock { s in
            s.channels[device]?[key] = nil
            if s.channels[device]?.isEmpty == true { s.channels[device] = nil }
        }
    }

    static func hash(_ token: String) -> String {
        Hex.encode(SHA256Digest.of(Array(token.utf8)))
    }

    /// A short description of a browser from its `User-Agent`.
    public static func describe(userAgent: String?) -> String {
        guard let agent = userAgent else { return "a browser" }
        let browser =
            agent.contains("Firefox/")
            ? "Firefox"
            : agent.contains("Edg/")
                ? "Edge"
                : agent.contains("Chrome/") || agent.contains("CriOS/")
                    ? "Chrome"
                    : agent.contains("Safari/") ? "Safari" : "A browser"
        let system =
            agent.contains("Android")
            ? "Android"
            : agent.contains("iPhone")
                ? "iPhone"
                : agent.contains("iPad")
                    ? "iPad"
                    : agent.contains("Windows")
                        ? "Windows"
                        : agent.contains("Mac OS X")
                            ? "a Mac"
                            : agent.contains("Linux") ? "Linux" : "a device"
        return "\(browser) on \(system)"
    }
}
