import FoundationEssentials
import NIOCore
import SweeperConventions
import SweeperCrypto
import Synchronization

/// Who may use the web board: one-time login secrets handed out at the
/// control socket (`sweeper web`), and the sessions they start, each a
/// random cookie value. Everything here lives in memory: a restart logs
/// every browser out, and `sweeper web` logs one in again.
public final class WebAccess: Sendable {
    /// A login secret handed out and not used yet.
    struct Login {
        var expiresMillis: Int64
        var game: String?
        var player: String?
    }

    /// A browser logged in.
    struct Session {
        /// When it was last used (for eviction).
        var lastUsedMillis: Int64
        /// The hosted player it plays as (nil: the device's own player).
        var player: String?
    }

    private struct State {
        var logins: [String: Login] = [:]
        /// Sessions by cookie value.
        var sessions: [String: Session] = [:]
        /// The WebSockets open for each hosted player, closed when it is logged out.
        var channels: [String: [ObjectIdentifier: any Channel]] = [:]
    }

    /// How long a login secret works, in milliseconds.
    public static let loginLifetimeMillis: Int64 = 10 * 60 * 1000
    /// The most login secrets outstanding; the oldest goes first.
    public static let loginLimit = 16
    /// The most browsers logged in at once; the least recently used goes first.
    public static let sessionLimit = 64
    /// The session cookie's name.
    public static let cookieName = "sweeper-session"

    private let state = Mutex(State())
    private let clock: @Sendable () -> Int64

    /// Creates an empty access list; `clock` gives milliseconds since 1970.
    public init(clock: @escaping @Sendable () -> Int64 = WebAccess.wallMillis) {
        self.clock = clock
    }

    /// The time now, in milliseconds since 1970.
    public static func wallMillis() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }

    /// A new login secret (256 random bits, hex) and when it expires.
    /// `game` is what the page opens after logging in; `player` (a hosted
    /// player's id) whom the browser plays as (nil: the device's own player).
    public func issueLogin(game: String? = nil, player: String? = nil) -> (secret: String, expiresMillis: Int64) {
        let secret = Self.randomToken()
        let now = clock()
        let expires = now + Self.loginLifetimeMillis
        state.withLock { s in
            s.logins = s.logins.filter { $0.value.expiresMillis > now }
            while s.logins.count >= Self.loginLimit, let oldest = s.logins.min(by: { $0.value.expiresMillis < $1.value.expiresMillis }) {
                s.logins[oldest.key] = nil
            }
            s.logins[secret] = Login(expiresMillis: expires, game: game, player: player)
        }
        return (secret, expires)
    }

    /// Uses a login secret once: a new session's cookie value and the game
    /// to open, or nil when the secret is unknown, used or expired.
    public func redeem(_ secret: String) -> (session: String, game: String?)? {
        let now = clock()
        return state.withLock { s -> (String, String?)? in
            guard let login = s.logins.removeValue(forKey: secret), login.expiresMillis > now else { return nil }
            let session = Self.randomToken()
            while s.sessions.count >= Self.sessionLimit, let oldest = s.sessions.min(by: { $0.value.lastUsedMillis < $1.value.lastUsedMillis }) {
                s.sessions[oldest.key] = nil
            }
            s.sessions[session] = Session(lastUsedMillis: now, player: login.player)
            return (session, login.game)
        }
    }

    /// Whether `cookie` is a live session (and marks it used).
    public func admits(session cookie: String) -> Bool {
        player(ofSession: cookie) != nil
    }

    /// The player a live session plays as (`.some(nil)`: the device's own),
    /// nil when `cookie` is no session; marks it used.
    public func player(ofSession cookie: String) -> String?? {
        let now = clock()
        return state.withLock { s -> String?? in
            guard var session = s.sessions[cookie] else { return nil }
            session.lastUsedMillis = now
            s.sessions[cookie] = session
            return .some(session.player)
        }
    }

    /// Logs every browser out.
    public func endSessions() {
        state.withLock { $0.sessions = [:] }
    }

    /// Logs out every browser of a hosted player (`player`, its id): its
    /// sessions end, its login secrets stop working, and its WebSockets
    /// close. Returns how many sessions and WebSockets ended.
    @discardableResult
    public func logOut(player: String) -> Int {
        let (ended, channels) = state.withLock { s -> (Int, [any Channel]) in
            let before = s.sessions.count
            s.sessions = s.sessions.filter { $0.value.player != player }
            s.logins = s.logins.filter { $0.value.player != player }
            return (before - s.sessions.count, Array((s.channels.removeValue(forKey: player) ?? [:]).values))
        }
        for channel in channels { channel.close(promise: nil) }
        return ended + channels.count
    }

    /// Notes a WebSocket of a hosted player, closed when it is logged out.
    func track(_ channel: any Channel, player: String) {
        let key = ObjectIdentifier(channel)
        state.withLock { $0.channels[player, default: [:]][key] = channel }
        channel.closeFuture.whenComplete { _ in
            self.state.withLock { s in
                s.channels[player]?[key] = nil
                if s.channels[player]?.isEmpty == true { s.channels[player] = nil }
            }
        }
    }

    /// 32 random bytes (libsodium's generator) as hex.
    static func randomToken() -> String {
        Hex.encode(SecretBytes(randomCount: 32).bytes)
    }
}

/// What a request must carry to be served: one of the board's own host
/// names (a page of another site that resolves its name to this machine,
/// DNS rebinding, names its own host) and, on a WebSocket, the board's own
/// origin (a page of another site in the same browser sends its own).
public struct WebOrigin: Sendable, Equatable {
    /// The port the board is served on.
    public var port: Int
    /// Served over TLS to the home network: at any address of this machine
    /// or a `.local` name, not at a name of the wider DNS.
    public var lan: Bool

    /// Creates the rule for a board on `port`.
    public init(port: Int, lan: Bool = false) {
        self.port = port
        self.lan = lan
    }

    /// The scheme of the board's own origin.
    public var scheme: String { lan ? "https" : "http" }

    /// The `Host` values the board answers to on loopback.
    public var hosts: [String] { ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)"] }

    /// Whether a request's `Host` header names the board.
    public func admits(host: String?) -> Bool {
        guard let host = host.map({ withPort($0.lowercased()) }) else { return false }
        guard lan else { return hosts.contains(host) }
        guard host.hasSuffix(":\(port)") else { return false }
        let name = host.dropLast(":\(port)".count)
        if name.hasPrefix("[") && name.hasSuffix("]") { return name.dropFirst().dropLast().allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." } }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        if labels.count == 4, labels.allSatisfy({ !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isNumber) && (Int($0) ?? 256) < 256 }) {
            return true
        }
        return name.hasSuffix(".local") && name.count > 6 && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." }
    }

    /// `host` with the board's port: a browser leaves the scheme's own
    /// port (443, 80) out of `Host` and `Origin`.
    private func withPort(_ host: String) -> String {
        guard port == (lan ? 443 : 80) else { return host }
        let bracketed = host.hasPrefix("[") && host.hasSuffix("]")
        return bracketed || !host.contains(":") ? host + ":\(port)" : host
    }

    /// Whether a WebSocket's `Origin` is the board's own page, served at `host`.
    public func admits(origin: String?, host: String?) -> Bool {
        guard let origin, admits(host: host), let host else { return false }
        return origin.lowercased() == scheme + "://" + host.lowercased()
    }

    /// The value of cookie `name` in a `Cookie` header, if present.
    public static func cookie(_ name: String, in header: String?) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.drop { $0 == " " || $0 == "\t" }
            guard let equals = pair.firstIndex(of: "=") else { continue }
            if pair[..<equals] == name { return String(pair[pair.index(after: equals)...]) }
        }
        return nil
    }
}
