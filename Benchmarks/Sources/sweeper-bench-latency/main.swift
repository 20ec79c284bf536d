// sweeper-bench-latency: the measuring pieces of Scripts/bench.py (and so
// of Scripts/bench.sh and Scripts/bench-latency.sh).
//
//   sweeper-bench-latency moves MOVER_SOCKET GAME COUNT WATCHER_SOCKET…
//       flags COUNT hidden cells of GAME on the mover's daemon, one at a time,
//       and times each from the move's answer to the `cells` event with that
//       cell arriving on each watcher's event stream (other daemons), and
//       each move from its request to its arrival on the last of them.
//   sweeper-bench-latency paced-moves MOVER_SOCKET GAME COUNT PACE_MS WATCHER_SOCKET…
//       the same, one move every PACE_MS as a player's keys come (every
//       thread and the disk idle in between), timed from request and answer.
//   sweeper-bench-latency load GAME RATE SECONDS SOCKET…
//       a player on every daemon flags hidden cells of GAME at RATE moves a
//       second each for SECONDS, all at once; every move is timed from its
//       answer to its arrival on every other daemon's event stream.
//   sweeper-bench-latency cursors MOVER_SOCKET GAME COUNT WATCHER_SOCKET…
//       moves a viewer's cursor over GAME on the mover's daemon COUNT times,
//       one move every 60 ms (slower than the 20-a-second coalescing), and
//       times each from the `cursor` line sent to the `presence` event with
//       that cell arriving on each watcher's event stream.
//   sweeper-bench-latency echo PORT          a TCP echo server on 0.0.0.0:PORT
//   sweeper-bench-latency ping HOST PORT COUNT   TCP ping-pong round trips (64 bytes)
//   sweeper-bench-latency relay LISTEN TARGET  passes what comes to LISTEN on to TARGET
//       (each unix:PATH, tcp:HOST:PORT, or tcp:PORT to listen on), one connection
//   sweeper-bench-latency paced-relay FIRST LAST COUNT PACE_MS
//       64 bytes into FIRST every PACE_MS, each timed to its arrival on LAST
//       (listened on here) through the relays between: a path's floor at a
//       player's pace
//   sweeper-bench-latency sign-verify COUNT  one Ed25519 signature plus one verification
//
// Each measuring subcommand prints one line `NAME n=… p50_ms=… p99_ms=… …`.
// Loops are bounded: a move whose event does not come within 5 s counts as lost.

import Foundation
import SweeperControl
import SweeperCrypto
import Synchronization

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("sweeper-bench-latency: \(message)\n".utf8))
    exit(2)
}

/// Prints the line for a set of durations (seconds).
func report(_ name: String, _ samples: [Double], extra: String = "") {
    guard !samples.isEmpty else { fail("\(name): no samples") }
    let sorted = samples.sorted()
    func pct(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1)] }
    let mean = sorted.reduce(0, +) / Double(sorted.count)
    func ms(_ s: Double) -> String { String(format: "%.3f", s * 1000) }
    print("\(name) n=\(sorted.count) p50_ms=\(ms(pct(50))) p90_ms=\(ms(pct(90))) p99_ms=\(ms(pct(99))) max_ms=\(ms(sorted.last!)) mean_ms=\(ms(mean))\(extra)")
}

func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

// MARK: Moves

struct Cell: Hashable, Sendable { var x: Int, y: Int }

/// Arrival times of cells on the watcher's stream, and at most one mover waiting for one.
final class Arrivals: Sendable {
    private struct State: ~Copyable {
        var arrived: [Cell: ContinuousClock.Instant] = [:]
        var waiter: (Cell, CheckedContinuation<ContinuousClock.Instant?, Never>)?
    }
    private let state = Mutex(State())

    func record(_ cell: Cell, at instant: ContinuousClock.Instant) {
        let waiter: CheckedContinuation<ContinuousClock.Instant?, Never>? = state.withLock { s in
            if let w = s.waiter, w.0 == cell {
                s.waiter = nil
                return w.1
            }
            if s.arrived[cell] == nil { s.arrived[cell] = instant }
            return nil
        }
        waiter?.resume(returning: instant)
    }

    /// The arrival of `cell`, waiting at most `timeout`; nil when it never came.
    func wait(for cell: Cell, timeout: Duration) async -> ContinuousClock.Instant? {
        let expiry = Task {
            try? await Task.sleep(for: timeout)
            let w: CheckedContinuation<ContinuousClock.Instant?, Never>? = self.state.withLock { s in
                guard let w = s.waiter, w.0 == cell else { return nil }
                s.waiter = nil
                return w.1
            }
            w?.resume(returning: nil)
        }
        defer { expiry.cancel() }
        return await withCheckedContinuation { (c: CheckedContinuation<ContinuousClock.Instant?, Never>) in
            let ready: ContinuousClock.Instant? = state.withLock { s in
                if let t = s.arrived.removeValue(forKey: cell) { return t }
                s.waiter = (cell, c)
                return nil
            }
            if let ready { c.resume(returning: ready) }
        }
    }
}

/// Subscribes to `game` on `socket` and hands every changed cell's arrival
/// to `record` until the returned task is cancelled.
func watch(
    _ socket: String, game: String, clock: ContinuousClock,
    record: @escaping @Sendable (Cell, ContinuousClock.Instant) -> Void
) -> Task<Void, any Error> {
    Task {
        try await ControlClient.withConnection(socketPath: socket) { watch in
            let stream = try await watch.subscribe(game: game)
            for await event in stream where event.event == .cells {
                let now = clock.now
                for c in event.cells ?? [] { record(Cell(x: c.x, y: c.y), now) }
            }
        }
    }
}

/// The hidden cells of `game` as the daemon at `socket` shows it.
func hiddenCells(_ socket: String, game: String) async throws -> [Cell] {
    try await ControlClient.withConnection(socketPath: socket) { client in
        let view = try await client.call(Commands.Show.self, .init(game: game))
        var hidden: [Cell] = []
        for (y, row) in view.board.enumerated() {
            for (x, ch) in row.enumerated() where ch == "#" { hidden.append(Cell(x: x, y: y)) }
        }
        return hidden
    }
}

/// Times `count` flags made on the mover's daemon, each from its answer and
/// from its request to its arrival on every watcher. Back to back (`pace`
/// nil), each starts as the last arrives, with every thread on the way still
/// awake; paced, a move starts `pace` after the last began, as a player's
/// keys come, and every thread and the disk have gone idle in between.
func moves(mover: String, watchers: [String], game: String, count: Int, pace: Duration? = nil) async throws {
    let clock = ContinuousClock()
    let arrivals = watchers.map { _ in Arrivals() }
    let pumps = zip(watchers, arrivals).map { socket, arrivals in
        watch(socket, game: game, clock: clock) { arrivals.record($0, at: $1) }
    }
    defer { for p in pumps { p.cancel() } }
    let hidden = try await hiddenCells(mover, game: game)
    let warmup = min(50, count / 10)
    guard hidden.count >= count + warmup else { fail("only \(hidden.count) hidden cells for \(count + warmup) moves") }
    // Subscriptions are answered before events flow: give them a moment.
    try await Task.sleep(for: .milliseconds(200))
    try await ControlClient.withConnection(socketPath: mover) { move in
        var fromAnswer: [Double] = []
        var fromRequest: [Double] = []
        // Per move, from its request to its arrival on the last watcher: every other screen shows it.
        var toAll: [Double] = []
        var lost = 0
        var early = 0
        var last = clock.now - .seconds(1)
        for (i, cell) in hidden.prefix(count + warmup).enumerated() {
            if let pace {
                try await Task.sleep(until: last + pace, clock: clock)
                last = clock.now
            }
            let sent = clock.now
            _ = try await move.call(Commands.Flag.self, .init(game: game, x: cell.x, y: cell.y, mark: "flag"))
            let answered = clock.now
            var last: Double? = 0
            for watcher in arrivals {
                guard let arrived = await watcher.wait(for: cell, timeout: .seconds(5)) else {
                    lost += 1
                    last = nil
                    continue
                }
                guard i >= warmup else { continue }
                if arrived < answered { early += 1 }
                fromAnswer.append(seconds(arrived - answered))
                fromRequest.append(seconds(arrived - sent))
                last = last.map { Swift.max($0, seconds(arrived - sent)) }
            }
            if i >= warmup, let last { toAll.append(last) }
        }
        // The median of the first and the last tenth: does a move cost more as the game grows?
        let tenth = max(1, fromAnswer.count / 10)
        func median(_ xs: ArraySlice<Double>) -> String { String(format: "%.3f", xs.sorted()[xs.count / 2] * 1000) }
        let trend = " first_tenth_p50_ms=\(median(fromAnswer.prefix(tenth))) last_tenth_p50_ms=\(median(fromAnswer.suffix(tenth)))"
        let prefix = pace == nil ? "move" : "paced-move"
        report("\(prefix)-answer-to-event", fromAnswer, extra: " lost=\(lost) before_answer=\(early) warmup=\(warmup) watchers=\(watchers.count)" + trend)
        report("\(prefix)-request-to-event", fromRequest)
        if !toAll.isEmpty { report("\(prefix)-request-to-all", toAll) }
    }
}

// MARK: Cursors

func cursors(mover: String, watchers: [String], game: String, count: Int) async throws {
    let clock = ContinuousClock()
    let (moverID, view) = try await ControlClient.withConnection(socketPath: mover) { c in
        (try await c.call(Commands.Status.self, Empty()).peer, try await c.call(Commands.Show.self, .init(game: game)))
    }
    let arrivals = watchers.map { _ in Arrivals() }
    let pumps = zip(watchers, arrivals).map { socket, arrivals in
        Task {
            try await ControlClient.withConnection(socketPath: socket) { watch in
                for await event in try await watch.subscribe() where event.event == .presence {
                    let now = clock.now
                    guard let p = event.presence, p.peer == moverID, p.game != nil, let x = p.x, let y = p.y else { continue }
                    arrivals.record(Cell(x: x, y: y), at: now)
                }
            }
        }
    }
    defer { for p in pumps { p.cancel() } }
    let warmup = min(50, count / 10)
    // Every cell of the board in turn, so that two moves in a row never name the same cell.
    let cells = (0..<(count + warmup)).map { i in Cell(x: i % view.width, y: (i / view.width) % view.height) }
    try await Task.sleep(for: .milliseconds(200))
    try await ControlClient.withConnection(socketPath: mover) { viewer in
        _ = try await viewer.subscribe()
        var samples: [Double] = []
        var lost = 0
        var last = clock.now - .seconds(1)
        for (i, cell) in cells.enumerated() {
            try await Task.sleep(until: last + .milliseconds(60), clock: clock)
            let sent = clock.now
            last = sent
            try await viewer.setCursor(.init(game: view.game, x: cell.x, y: cell.y))
            for watcher in arrivals {
                guard let arrived = await watcher.wait(for: cell, timeout: .seconds(5)) else {
                    lost += 1
                    continue
                }
                if i >= warmup { samples.append(seconds(arrived - sent)) }
            }
        }
        report("cursor-to-event", samples, extra: " lost=\(lost) warmup=\(warmup) watchers=\(watchers.count)")
    }
}

/// The first time each cell was seen: one player's answers, or one
/// watcher's arrivals.
final class CellTimes: Sendable {
    private let times = Mutex<[Cell: ContinuousClock.Instant]>([:])
    func record(_ cell: Cell, at instant: ContinuousClock.Instant) {
        times.withLock { t in if t[cell] == nil { t[cell] = instant } }
    }
    var all: [Cell: ContinuousClock.Instant] { times.withLock { $0 } }
}

func load(game: String, rate: Int, seconds duration: Int, sockets: [String]) async throws {
    let clock = ContinuousClock()
    let logs = sockets.map { _ in CellTimes() }
    let pumps = zip(sockets, logs).map { socket, log in
        watch(socket, game: game, clock: clock) { log.record($0, at: $1) }
    }
    defer { for p in pumps { p.cancel() } }
    let hidden = try await hiddenCells(sockets[0], game: game)
    let perPlayer = rate * duration
    guard hidden.count >= perPlayer * sockets.count else { fail("only \(hidden.count) hidden cells for \(perPlayer * sockets.count) moves") }
    try await Task.sleep(for: .milliseconds(200))
    let answers = sockets.map { _ in CellTimes() }
    let start = clock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for (i, socket) in sockets.enumerated() {
            let cells = hidden[(i * perPlayer)..<((i + 1) * perPlayer)]
            let answered = answers[i]
            group.addTask {
                try await ControlClient.withConnection(socketPath: socket) { move in
                    for (k, cell) in cells.enumerated() {
                        // A fixed schedule: move k is due at k / RATE seconds, each
                        // player's shifted by its share of one interval, so the
                        // players' moves interleave rather than land together.
                        let interval = 1_000_000_000 / Int64(rate)
                        let due = start + .nanoseconds(Int64(k) * interval + Int64(i) * interval / Int64(sockets.count))
                        if clock.now < due { try await Task.sleep(until: due, clock: clock) }
                        _ = try await move.call(Commands.Flag.self, .init(game: game, x: cell.x, y: cell.y, mark: "flag"))
                        answered.record(cell, at: clock.now)
                    }
                }
            }
        }
        try await group.waitForAll()
    }
    let elapsed = seconds(clock.now - start)
    try await Task.sleep(for: .seconds(3))
    var samples: [Double] = []
    var lost = 0
    var moves = 0
    let arrivedAt = logs.map(\.all)
    for (i, answered) in answers.enumerated() {
        for (cell, at) in answered.all {
            moves += 1
            for (j, arrivals) in arrivedAt.enumerated() where j != i {
                guard let arrived = arrivals[cell] else {
                    lost += 1
                    continue
                }
                samples.append(Swift.max(0, seconds(arrived - at)))
            }
        }
    }
    let achieved = Double(moves) / elapsed / Double(sockets.count)
    report("load-answer-to-event", samples, extra: String(format: " players=%d moves=%d lost=%d rate_per_player=%.1f", sockets.count, moves, lost, achieved))
}

// MARK: TCP

func setNoDelay(_ fd: Int32) {
    var one: Int32 = 1
    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
}

func address(_ host: String, _ port: UInt16) -> sockaddr_in {
    var a = sockaddr_in()
    a.sin_family = sa_family_t(AF_INET)
    a.sin_port = port.bigEndian
    guard inet_pton(AF_INET, host, &a.sin_addr) == 1 else { fail("bad IPv4 address \(host)") }
    return a
}

func echo(port: UInt16) -> Never {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    var a = address("0.0.0.0", port)
    let rc = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard rc == 0, listen(fd, 4) == 0 else { fail("echo: bind/listen on \(port): \(String(cString: strerror(errno)))") }
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let c = accept(fd, nil, nil)
        if c < 0 { continue }
        setNoDelay(c)
        while true {
            let n = read(c, &buffer, buffer.count)
            if n <= 0 { break }
            var off = 0
            while off < n {
                let w = buffer[off..<n].withUnsafeBytes { write(c, $0.baseAddress, $0.count) }
                if w <= 0 { break }
                off += w
            }
        }
        close(c)
    }
}

func ping(host: String, port: UInt16, count: Int) {
    let clock = ContinuousClock()
    // The echo server may still be starting: dialed with a bounded number of tries.
    let fd = Endpoint.tcp(host: host, port: port).dialed()
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let message = [UInt8](repeating: 0x2A, count: 64)
    var buffer = [UInt8](repeating: 0, count: 64)
    var samples: [Double] = []
    let warmup = min(50, count / 10)
    for i in 0..<(count + warmup) {
        let start = clock.now
        guard writeAll(fd, message[...]) else { fail("ping: write failed") }
        guard readExactly(fd, into: &buffer) else { fail("ping: read failed after \(i) round trips") }
        if i >= warmup { samples.append(seconds(clock.now - start)) }
    }
    close(fd)
    report("tcp-rtt", samples)
}

// MARK: Relays: the floor of a path through processes at a player's pace

/// A stream socket endpoint: `unix:PATH`, `tcp:HOST:PORT` to dial, `tcp:PORT` to listen on.
enum Endpoint {
    case unix(String)
    case tcp(host: String, port: UInt16)

    init(_ spec: String) {
        let parts = spec.split(separator: ":", maxSplits: 2).map(String.init)
        switch (parts.first, parts.count) {
        case ("unix", 2): self = .unix(parts[1])
        case ("tcp", 2): self = .tcp(host: "0.0.0.0", port: UInt16(parts[1]) ?? 0)
        case ("tcp", 3): self = .tcp(host: parts[1], port: UInt16(parts[2]) ?? 0)
        default: fail("an endpoint is unix:PATH, tcp:HOST:PORT or tcp:PORT, not \(spec)")
        }
    }

    /// Runs `body` with the endpoint's socket address.
    func withAddress<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        switch self {
        case .unix(let path):
            var a = sockaddr_un()
            a.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            guard bytes.count < MemoryLayout.size(ofValue: a.sun_path) else { fail("socket path too long: \(path)") }
            withUnsafeMutableBytes(of: &a.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
            return withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        case .tcp(let host, let port):
            var a = address(host, port)
            return withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        }
    }

    var family: Int32 {
        if case .unix = self { return AF_UNIX }
        return AF_INET
    }

    /// A listening socket; a unix path left by an earlier run is removed first.
    func listening() -> Int32 {
        let fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if case .unix(let path) = self { unlink(path) }
        guard withAddress({ bind(fd, $0, $1) }) == 0, listen(fd, 4) == 0 else { fail("cannot listen on \(self): \(String(cString: strerror(errno)))") }
        // accept gives up after 10 s, so a relay that never came cannot hang the run.
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    /// A connected socket, tried for up to 5 s while the other end starts.
    func dialed() -> Int32 {
        for _ in 0..<100 {
            let fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
            if withAddress({ connect(fd, $0, $1) }) == 0 {
                if family == AF_INET { setNoDelay(fd) }
                return fd
            }
            close(fd)
            usleep(50_000)
        }
        fail("cannot connect to \(self)")
    }

    /// The one connection that comes to a listening socket.
    static func accepted(on listener: Int32) -> Int32 {
        let fd = accept(listener, nil, nil)
        guard fd >= 0 else { fail("no connection came within 10 s") }
        var domain: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &length) == 0, domain == AF_INET { setNoDelay(fd) }
        return fd
    }
}

/// Writes all of `bytes`; false when the socket fails.
func writeAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
    var off = bytes.startIndex
    while off < bytes.endIndex {
        let w = bytes[off...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if w <= 0 { return false }
        off += w
    }
    return true
}

/// Fills `buffer` from `fd`; false when the socket fails or closes first.
func readExactly(_ fd: Int32, into buffer: inout [UInt8]) -> Bool {
    var got = 0
    while got < buffer.count {
        let n = buffer[got...].withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { return false }
        got += n
    }
    return true
}

/// Takes the one connection to `listen`, dials `target`, and passes what
/// comes on to it until either end closes: one process on the way, as a
/// daemon is, doing nothing but wake and pass on.
func relay(listen: Endpoint, target: Endpoint) -> Never {
    let listener = listen.listening()
    let from = Endpoint.accepted(on: listener)
    let to = target.dialed()
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = read(from, &buffer, buffer.count)
        if n <= 0 || !writeAll(to, buffer[0..<n]) { exit(0) }
    }
}

/// Sends 64 bytes into `first` every `pace` ms and times each to its
/// arrival on `last` (where this listens) after the relays between: the
/// floor of a path through as many processes and links at a player's pace.
func pacedRelay(first: Endpoint, last: Endpoint, count: Int, pace: Int) {
    let listener = last.listening()
    let into = first.dialed()
    let out = Endpoint.accepted(on: listener)
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(out, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let clock = ContinuousClock()
    let message = [UInt8](repeating: 0x2A, count: 64)
    var buffer = [UInt8](repeating: 0, count: 64)
    var samples: [Double] = []
    let warmup = min(50, count / 10)
    var next = clock.now
    for i in 0..<(count + warmup) {
        next = next + .milliseconds(pace)
        let wait = next - clock.now
        if wait > .zero { usleep(UInt32(seconds(wait) * 1e6)) }
        let start = clock.now
        guard writeAll(into, message[...]) else { fail("paced-relay: write failed") }
        guard readExactly(out, into: &buffer) else { fail("paced-relay: nothing came back after \(i) messages") }
        if i >= warmup { samples.append(seconds(clock.now - start)) }
    }
    close(into)
    close(out)
    report("relay", samples, extra: " pace_ms=\(pace)")
}

// MARK: Signatures

func signVerify(count: Int) {
    let identity = SigningIdentity()
    let message = (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    let clock = ContinuousClock()
    var samples: [Double] = []
    var failures = 0
    for _ in 0..<count {
        let start = clock.now
        let signature = identity.sign(message)
        let ok = identity.peerID.isValidSignature(signature, of: message)
        samples.append(seconds(clock.now - start))
        if !ok { failures += 1 }
    }
    guard failures == 0 else { fail("sign-verify: \(failures) signatures did not verify") }
    report("sign-verify", samples)
}

// MARK: Main

let args = Array(CommandLine.arguments.dropFirst())
func int(_ i: Int) -> Int {
    guard i < args.count, let v = Int(args[i]), v > 0 else { fail("argument \(i + 1) must be a positive number") }
    return v
}

switch args.first {
case "moves":
    guard args.count >= 5 else { fail("usage: moves MOVER_SOCKET GAME COUNT WATCHER_SOCKET…") }
    do {
        try await moves(mover: args[1], watchers: Array(args[4...]), game: args[2], count: int(3))
    } catch {
        fail("moves: \(error)")
    }
case "paced-moves":
    guard args.count >= 6 else { fail("usage: paced-moves MOVER_SOCKET GAME COUNT PACE_MS WATCHER_SOCKET…") }
    do {
        try await moves(mover: args[1], watchers: Array(args[5...]), game: args[2], count: int(3), pace: .milliseconds(int(4)))
    } catch {
        fail("paced-moves: \(error)")
    }
case "load":
    guard args.count >= 6 else { fail("usage: load GAME RATE SECONDS SOCKET…") }
    do {
        try await load(game: args[1], rate: int(2), seconds: int(3), sockets: Array(args[4...]))
    } catch {
        fail("load: \(error)")
    }
case "cursors":
    guard args.count >= 5 else { fail("usage: cursors MOVER_SOCKET GAME COUNT WATCHER_SOCKET…") }
    do {
        try await cursors(mover: args[1], watchers: Array(args[4...]), game: args[2], count: int(3))
    } catch {
        fail("cursors: \(error)")
    }
case "echo":
    guard args.count == 2 else { fail("usage: echo PORT") }
    echo(port: UInt16(clamping: int(1)))
case "ping":
    guard args.count == 4 else { fail("usage: ping HOST PORT COUNT") }
    ping(host: args[1], port: UInt16(clamping: int(2)), count: int(3))
case "relay":
    guard args.count == 3 else { fail("usage: relay LISTEN TARGET") }
    relay(listen: Endpoint(args[1]), target: Endpoint(args[2]))
case "paced-relay":
    guard args.count == 5 else { fail("usage: paced-relay FIRST LAST COUNT PACE_MS") }
    pacedRelay(first: Endpoint(args[1]), last: Endpoint(args[2]), count: int(3), pace: int(4))
case "sign-verify":
    guard args.count == 2 else { fail("usage: sign-verify COUNT") }
    signVerify(count: int(1))
default:
    fail("usage: sweeper-bench-latency moves|paced-moves|cursors|load|echo|ping|relay|paced-relay|sign-verify …")
}
