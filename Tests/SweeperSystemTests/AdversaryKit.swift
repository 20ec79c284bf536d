import Foundation
import SweeperCrypto
import SweeperStore
import SweeperTestSupport

@testable import SweeperSync

// A toolkit for scripting hostile peers and control clients against a real
// `sweeperd`: a daemon started with posix_spawn on loopback, a blocking TCP
// client that speaks the peer wire protocol (length-prefixed frames, the
// secret handshake, secret streams) byte by byte, and a few helpers to
// forge ops. Everything is bounded in time; every process is stopped by pid.

enum AdversaryError: Error, CustomStringConvertible {
    case setup(String)
    case wire(String)
    var description: String {
        switch self {
        case .setup(let s): "setup: \(s)"
        case .wire(let s): "wire: \(s)"
        }
    }
}

// MARK: A daemon under attack

/// A `sweeperd` listening for peers on 127.0.0.1 (any port), with its own
/// state directory, control socket and log file (its stderr).
final class TargetDaemon {
    let root: String
    let name: String
    var socketPath: String { root + "/run/control.sock" }
    var logPath: String { root + "/sweeperd.log" }
    private(set) var pid: pid_t = 0

    init(name: String) throws {
        self.name = name
        root = "/tmp/swadv-" + UUID().uuidString.prefix(8).lowercased()
        // The daemon makes the socket's directory itself (0700).
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try TestDaemons.checkBinaries()
    }

    var environment: [String: String] { TestDaemons.environment(root: root) }

    /// Starts the daemon and waits (at most 60 s) until its control socket answers `status`.
    func start() throws {
        pid = try TestDaemons.launch(
            [
                "--state-dir", root + "/state", "--socket", socketPath, "--no-mdns", "--name", name, "--listen", "127.0.0.1:0", "--web-port", "0",
                "--log-level", "info",
            ],
            environment: environment, log: logPath, ready: { [socketPath] in TestDaemons.answers(socketPath) })
    }

    /// Whether the daemon process is still there.
    var isRunning: Bool { pid > 0 && kill(pid, 0) == 0 }

    func stop() {
        if pid > 0 { stopProcess(pid) }
        pid = 0
    }

    /// Stops the daemon and removes its directory (kept, for a post-mortem,
    /// when `SWEEPER_KEEP_TEST_DIRS` is set).
    func cleanup() {
        stop()
        if ProcessInfo.processInfo.environment["SWEEPER_KEEP_TEST_DIRS"] == nil {
            try? FileManager.default.removeItem(atPath: root)
        }
    }

    func log() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The log from byte `offset` on (take `log().utf8.count` before an attack).
    func log(since offset: Int) -> String {
        let all = Array(log().utf8)
        return String(decoding: all[min(offset, all.count)...], as: UTF8.self)
    }

    /// Log lines since `offset` that contain every one of `needles`.
    func logLines(since offset: Int, containing needles: String...) -> [String] {
        log(since: offset).split(separator: "\n").map(String.init).filter { line in needles.allSatisfy { line.contains($0) } }
    }

    /// One request on a fresh connection: the answer as a JSON object.
    func request(_ line: String) throws -> [String: Any] {
        let c = try ControlLineClient(path: socketPath)
        c.send(line)
        guard let answer = c.readJSON() else { throw AdversaryError.setup("no answer to \(line)") }
        return answer
    }

    /// A successful answer's result.
    func result(_ line: String) throws -> [String: Any] {
        let a = try request(line)
        guard a["ok"] as? Bool == true, let r = a["result"] as? [String: Any] else {
            throw AdversaryError.setup("\(line) failed: \(a)")
        }
        return r
    }

    /// The port it listens on for peers.
    func peerPort() throws -> Int {
        let listening = try result(#"{"id":1,"command":"status"}"#)["listening"] as? [String] ?? []
        guard let port = listening.first.flatMap({ $0.split(separator: ":").last }).flatMap({ Int($0) }) else {
            throw AdversaryError.setup("no listening address in status: \(listening)")
        }
        return port
    }

    /// Joins `member`'s circle with an invitation it makes, redeemed at its peer port.
    func join(_ member: TargetDaemon, port: Int) throws {
        guard let code = try member.result(#"{"id":1,"command":"invite"}"#)["code"] as? String else {
            throw AdversaryError.setup("invite printed no code")
        }
        _ = try result(#"{"id":1,"command":"join","code":"\#(code)","address":"127.0.0.1:\#(port)"}"#)
    }

    /// The daemon's signing identity, read from its database: what a
    /// removed device keeps.
    func identity() throws -> SigningIdentity {
        let store = try Store(directory: root + "/state")
        defer { store.close() }
        guard let stored = try store.identity() else { throw AdversaryError.setup("no identity in the database") }
        return try SigningIdentity(secretKeyBytes: [UInt8](stored.secretKey))
    }

    func peerID() throws -> PeerID {
        guard let text = try result(#"{"id":1,"command":"status"}"#)["peer"] as? String else { throw AdversaryError.setup("no peer id") }
        return try PeerID(parsing: text)
    }

    /// The circle key, read from the daemon's database (an invite code no
    /// longer carries it): what a member's attacker would hold.
    func circle() throws -> CircleKey {
        let store = try Store(directory: root + "/state")
        defer { store.close() }
        guard let key = try store.circleKey() else { throw AdversaryError.setup("no circle key in the database") }
        return try CircleKey(bytes: [UInt8](key))
    }

    /// Every game's id and state digest.
    func digests() throws -> [String: String] {
        let games = try result(#"{"id":1,"command":"games"}"#)["games"] as? [[String: Any]] ?? []
        var out: [String: String] = [:]
        for g in games {
            guard let id = g["game"] as? String else { continue }
            out[id] = try result(#"{"id":1,"command":"show","game":"\#(id)"}"#)["digest"] as? String
        }
        return out
    }

    /// Starts an intermediate game (16×16); returns its id. Its seed is
    /// not chosen: a chosen seed makes a practice game (a seeded op), which
    /// the peers of old protocol versions these tests play are never sent.
    func newGame() throws -> String {
        guard let id = try result(#"{"id":1,"command":"new","preset":"intermediate"}"#)["game"] as? String else {
            throw AdversaryError.setup("new game without id")
        }
        return id
    }

    /// Flags the first covered, unflagged cell (a move that never ends the
    /// game and always changes its digest); returns whether it was answered.
    func flagFresh(game: String) throws -> Bool {
        let rows = try result(#"{"id":1,"command":"show","game":"\#(game)"}"#)["board"] as? [String] ?? []
        for (y, row) in rows.enumerated() {
            if let x = Array(row).firstIndex(of: "#") {
                let a = try request(#"{"id":2,"command":"flag","game":"\#(game)","x":\#(x),"y":\#(y),"mark":"flag"}"#)
                return a["ok"] as? Bool == true
            }
        }
        return false
    }

    /// How many file descriptors the daemon holds.
    func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }

    /// Peers linked now, by `status`.
    func linkedPeers() -> Int {
        ((try? result(#"{"id":1,"command":"status"}"#))?["peerCount"] as? Int) ?? -1
    }
}

/// Two daemons in one circle, the second linked to the first by a static
/// dial from 127.0.0.1; the first has one game of its own. Attackers come
/// from other loopback addresses (127.0.0.2 and up), so the honest link is
/// not counted against their per-address limits.
final class AttackScene {
    let target: TargetDaemon
    let honest: TargetDaemon
    let port: Int
    let circle: CircleKey
    let targetID: PeerID
    let game: String

    init() throws {
        target = try TargetDaemon(name: "ann")
        honest = try TargetDaemon(name: "bob")
        do {
            try target.start()
            try honest.start()
            port = try target.peerPort()
            circle = try target.circle()
            targetID = try target.peerID()
            try honest.join(target, port: port)
            _ = try honest.result(#"{"id":1,"command":"connect","address":"127.0.0.1:\#(port)"}"#)
            game = try target.newGame()
            guard eventually(60, { target.linkedPeers() == 1 && honest.linkedPeers() == 1 }) else {
                throw AdversaryError.setup("the honest peer did not link; logs:\n\(target.log())\n\(honest.log())")
            }
            guard eventually(60, { try honest.digests()[game] == target.digests()[game] }) else {
                throw AdversaryError.setup("the honest peer did not get the game")
            }
        } catch {
            honest.cleanup()
            target.cleanup()
            throw error
        }
    }

    func cleanup() {
        honest.cleanup()
        target.cleanup()
    }

    /// Makes `identity` a member, as a joining device would: the target
    /// makes an invitation, and `identity` redeems it on an invitation
    /// link from `source`. A member acting in bad faith starts so.
    @discardableResult
    func admit(_ identity: SigningIdentity = SigningIdentity(), from source: String) throws -> SigningIdentity {
        guard let code = try target.result(#"{"id":1,"command":"invite"}"#)["code"] as? String,
            case .pinned(let secret, _) = try InviteCode.read(code)
        else { throw AdversaryError.setup("invite printed no invitation code naming its circle's root") }
        let link = try AdversaryPeer(
            port: port, from: source, circle: InvitationSecret.handshakeKey(for: secret.identity.peerID), identity: identity)
        let signature = secret.identity.sign(InvitationSecret.admissionMessage(joining: identity.peerID, member: targetID))
        let offset = target.log().utf8.count
        let members = (try target.result(#"{"id":1,"command":"circle"}"#)["members"] as? [[String: Any]] ?? []).count
        link.send(message: [9] + secret.identity.peerID.bytes + signature.bytes)
        while let message = link.next() {
            if message.first == 10 {
                // The target answers first and then, in a job of its own,
                // opens its links and games to the new member (a link made
                // at once can beat that job on a loaded machine); it logs
                // "circle changed" once every part has taken the admission.
                guard eventually(20, { !target.logLines(since: offset, containing: "circle changed", "members=\(members + 1) ").isEmpty }) else {
                    throw AdversaryError.setup("the target never logged the admission's circle change")
                }
                return identity
            }
            if message.first == 11 { throw AdversaryError.setup("the target refused the admission: \(message)") }
        }
        throw AdversaryError.setup("the target closed the invitation link without an answer")
    }

    /// The target still serves: it is running, answers `status`, takes a
    /// move, and the honest peer gets that move (both digests agree), and a
    /// move of the honest peer's reaches the target. Returns what failed.
    func stillServes() throws -> String? {
        guard target.isRunning else { return "the daemon is gone; log:\n\(target.log())" }
        guard try target.request(#"{"id":1,"command":"status"}"#)["ok"] as? Bool == true else { return "status failed" }
        guard try target.flagFresh(game: game) else { return "the target took no move" }
        guard eventually(30, { try honest.digests()[game] == target.digests()[game] }) else {
            return "the target's move did not reach the honest peer"
        }
        guard try honest.flagFresh(game: game) else { return "the honest peer took no move" }
        guard eventually(30, { try honest.digests()[game] == target.digests()[game] }) else {
            return "the honest peer's move did not reach the target"
        }
        return nil
    }
}

// MARK: Control lines

// MARK: The wire

/// A blocking TCP connection to 127.0.0.1:`port` from a chosen loopback
/// source address, reading and writing peer frames (4-byte big-endian
/// length, then the bytes). Every frame sent is recorded, for replays.
final class WireClient {
    private let fd: Int32
    private var pending: [UInt8] = []
    private(set) var sentFrames: [[UInt8]] = []

    init(port: Int, from source: String, receiveTimeout: Int = 15) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw AdversaryError.wire("socket: \(errno)") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, source, &local.sin_addr)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = in_port_t(UInt16(port)).bigEndian
        inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let connected =
            bound == 0
            && withUnsafePointer(to: &remote) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            } == 0
        guard connected else {
            let why = String(cString: strerror(errno))
            close(fd)
            throw AdversaryError.wire("connect from \(source) to port \(port): \(why)")
        }
        var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var sendTimeout = timeval(tv_sec: 15, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &sendTimeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Writes raw bytes; false when the connection is gone.
    @discardableResult
    func sendRaw(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    /// Writes one frame.
    @discardableResult
    func sendFrame(_ frame: [UInt8]) -> Bool {
        sentFrames.append(frame)
        let n = UInt32(frame.count)
        return sendRaw([UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + frame)
    }

    private func fill() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = recv(fd, &buffer, buffer.count, 0)
        guard n > 0 else { return false }
        pending += buffer[0..<n]
        return true
    }

    /// The next frame; nil when the connection closed (or the receive timeout passed).
    func readFrame() -> [UInt8]? {
        while true {
            if pending.count >= 4 {
                let n = pending[0..<4].reduce(0) { $0 << 8 | Int($1) }
                if pending.count >= 4 + n {
                    let frame = Array(pending[4..<(4 + n)])
                    pending.removeSubrange(0..<(4 + n))
                    return frame
                }
            }
            guard fill() else { return nil }
        }
    }

    /// Reads and discards until the other side closes; true when it did
    /// within `seconds`.
    func waitForClose(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 200) >= 0 else { return false }
            if p.revents == 0 { continue }
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n == 0 { return true }
            if n < 0 && errno != EAGAIN && errno != EINTR { return true }  // reset
        }
        return false
    }
}

/// A peer speaking the real protocol with the real crypto: it runs the
/// client side of the secret handshake with the circle key it was given
/// (right or wrong) and an identity of its choosing, then talks through
/// secret streams. Its messages are built by hand from the documented
/// encoding (type byte ‖ body), so it can also send what no daemon would.
final class AdversaryPeer {
    let wire: WireClient
    let identity: SigningIdentity
    let circle: CircleKey
    private let sender: SecretStreamSender
    private let receiver: SecretStreamReceiver
    /// The sealed frames sent after the handshake, for replays.
    private(set) var sealedFrames: [[UInt8]] = []

    /// Connects and completes the handshake; throws when the daemon refuses it.
    init(port: Int, from source: String, circle: CircleKey, identity: SigningIdentity = SigningIdentity()) throws {
        wire = try WireClient(port: port, from: source)
        self.identity = identity
        self.circle = circle
        var handshake = SecretHandshake(role: .client, circle: circle, identity: identity)
        guard let first = handshake.start() else { throw AdversaryError.wire("no first message") }
        wire.sendFrame(first)
        var keys: HandshakeResult?
        while keys == nil {
            guard let frame = wire.readFrame() else { throw AdversaryError.wire("closed during the handshake") }
            switch try handshake.receive(frame) {
            case .send(let reply): wire.sendFrame(reply)
            case .finish(let reply, let result):
                if let reply { wire.sendFrame(reply) }
                keys = result
            }
        }
        guard let keys else { throw AdversaryError.wire("no keys") }
        sender = SecretStreamSender(key: keys.sendKey)
        wire.sendFrame(sender.header)
        guard let header = wire.readFrame() else { throw AdversaryError.wire("no stream header") }
        receiver = try SecretStreamReceiver(key: keys.receiveKey, header: header)
    }

    /// Seals and sends one message (type byte ‖ body).
    @discardableResult
    func send(message plain: [UInt8]) -> Bool {
        let sealed = sender.seal(plain)
        sealedFrames.append(sealed)
        return wire.sendFrame(sealed)
    }

    /// Sends a hello as a daemon of peer protocol `version` would.
    func sendHello(name: String = "mallory", version: UInt8 = 1) {
        let n = Array(name.utf8.prefix(64))
        send(message: [0, version, 0, 0, UInt8(n.count)] + n)
    }

    /// The type of the next message the daemon sends (a ping is answered,
    /// as a live daemon would, so the link stays up); nil when it closed.
    func nextType() -> UInt8? {
        guard let m = next(), let type = m.first else { return nil }
        if type == 2 { send(message: [3] + m.dropFirst()) }
        return type
    }

    /// Sends a sync message.
    @discardableResult
    func send(sync message: SyncMessage) -> Bool { send(message: [1] + message.encoded) }

    /// Sends membership records (link message 8).
    @discardableResult
    func send(membership records: [[UInt8]]) -> Bool {
        var m: [UInt8] = [8, UInt8(records.count >> 8), UInt8(records.count & 0xFF)]
        for r in records { m += [UInt8(r.count >> 24), UInt8(r.count >> 16 & 0xFF), UInt8(r.count >> 8 & 0xFF), UInt8(r.count & 0xFF)] + r }
        return send(message: m)
    }

    /// Whether the daemon closes the link within `seconds` (pings aside).
    func isClosed(within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            guard let m = next() else { return true }
            _ = m
        }
        return false
    }

    /// Sends ops, each op as its own one-op segment.
    func send(ops: [Op]) {
        send(sync: .ops(ops.compactMap { OpSegment(verifiedOps: [$0]) }))
    }

    /// The next decrypted message, nil when the link closed or nothing came in time.
    func next() -> [UInt8]? {
        guard let frame = wire.readFrame() else { return nil }
        return try? receiver.open(frame)
    }

    /// The next sync message from the daemon that `wanted` accepts (others
    /// and hellos skipped, pings answered), within ~`seconds`.
    func nextSync(seconds: Double = 15, where wanted: (SyncMessage) -> Bool = { _ in true }) -> SyncMessage? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            guard let m = next() else { return nil }
            if m.first == 2 { send(message: [3] + m.dropFirst()) }
            if m.first == 1, let s = try? SyncMessage(decoding: Array(m.dropFirst())), wanted(s) { return s }
        }
        return nil
    }
}

// MARK: Forged ops

enum Forge {
    /// An op by `author` made as the replica's rules expect (author's own
    /// key, this circle's proof), or, with `signer`, signed by another key.
    static func op(
        author: SigningIdentity, circle: CircleKey, game: GameID, seq: UInt64 = 1, lamport: UInt64 = 1_000,
        previous: OpHash = .none, payload: OpPayload, signer: SigningIdentity? = nil, claimedAuthor: PeerID? = nil
    ) -> Op {
        let claimed = claimedAuthor ?? author.peerID
        let unsigned = Op(
            gameID: game, author: claimed, seq: seq, lamport: lamport, previous: previous, wallClockMillis: 1,
            membershipProof: circle.membershipProof(for: claimed), payload: payload, signature: nil)
        let key = signer ?? author
        return unsigned.with(signature: key.sign(Op.signatureDomain + unsigned.canonicalBytes))
    }

    static func randomBytes(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8.random(in: 0...255) } }
}
