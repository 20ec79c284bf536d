// The control socket: bytes from a client go through the line framer (in a
// NIO pipeline, in pieces of input-chosen sizes), and each line is answered
// by the daemon's request router over a real store holding a game. Every
// answer must be one JSON line.
import Dispatch
import Foundation
import FuzzSupport
import Logging
import NIOCore
import NIOEmbedded
import NIOPosix
import SweeperControl
import SweeperCrypto
import SweeperStore

@testable import SweeperDaemon

/// A daemon's request router over a store in a scratch directory (on tmpfs
/// when there is one), assembled as `sweeperd` assembles it (its peer node
/// listens on loopback and dials nobody), made again every few hundred
/// inputs so games made by inputs do not pile up.
final class Host: @unchecked Sendable {
    nonisolated(unsafe) static var current: Host?
    nonisolated(unsafe) static var uses = 0

    let directory: String
    let store: Store
    let core: DaemonCore
    var router: ControlRouter { core.router }

    init() throws {
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm/" : NSTemporaryDirectory()
        directory = base + "sweeper-fuzz-control-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        let store = try Store(directory: directory)
        self.store = store
        let settings = DaemonSettings(
            stateDirectory: directory, socketPath: directory + "/control.sock", listen: ["127.0.0.1:0"], peers: [], name: "fuzz",
            mdns: false, logLevel: .critical)
        var quiet = Logger(label: "fuzz")
        quiet.logLevel = .critical
        let logger = quiet
        core = try wait {
            try await DaemonCore.assemble(
                settings: settings, store: store, notifier: SystemdNotifier(environment: [:]),
                eventLoop: MultiThreadedEventLoopGroup.singleton.next(), logger: logger)
        }
    }

    func close() {
        let node = core.network.node
        _ = try? wait { await node.shutdown() }
        store.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    static func get() -> Host? {
        uses += 1
        if uses % 500 == 0, let old = current {
            old.close()
            current = nil
        }
        if current == nil {
            do {
                current = try Host()
                // A game to play on.
                _ = current.map { answer($0.router, Data(#"{"id":1,"command":"new","preset":"beginner","seed":7}"#.utf8)) }
            } catch {
                FileHandle.standardError.write(Data("cannot make a store: \(error)\n".utf8))
                exit(1)
            }
        }
        return current
    }
}

/// Whether a request would reach outside the scratch directory and
/// loopback: a backup goes to any path it names, and `connect` dials any
/// address. Such requests are answered here, never run, so that an input
/// cannot write files on the machine that fuzzes or send traffic off it.
/// Read as the router reads it (JSONDecoder), so that both agree on a key given twice.
func reachesOutside(_ line: Data) -> Bool {
    struct Head: Decodable { var command: String? }
    guard let command = (try? JSONDecoder().decode(Head.self, from: line))?.command else { return false }
    if command == Commands.Backup.name { return true }
    guard command == Commands.Connect.name, let address = (try? JSONDecoder().decode(Commands.Connect.Arguments.self, from: line))?.address
    else { return false }
    let loopback = address.range(of: #"^(127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}|\[::1\]):[0-9]{1,5}$"#, options: .regularExpression) != nil
    return !loopback
}

/// The router's answer to one line, waited for.
func answer(_ router: ControlRouter, _ line: Data) -> Data {
    if reachesOutside(line) {
        return Data(#"{"id":null,"ok":false,"error":{"code":"not-while-fuzzing","message":"reaches outside the scratch directory or loopback"}}"#.utf8)
            + [0x0A]
    }
    let done = DispatchSemaphore(value: 0)
    let box = AnswerBox()
    Task {
        switch await router.reply(to: line) {
        case .answer(let data): box.data = data
        case .subscribe(let data, let events):
            box.data = data
            // The connection ends at once: the subscription ends with it.
            events.end()
        }
        done.signal()
    }
    done.wait()
    return box.data
}

final class AnswerBox: @unchecked Sendable {
    var data = Data()
}

/// Runs `body` to its end from synchronous code.
func wait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let done = DispatchSemaphore(value: 0)
    let box = ResultBox<T>()
    Task {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    guard let result = box.result else { throw CancellationError() }
    return try result.get()
}

final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}

/// What the hot lines' readers take from `line` without JSONDecoder
/// (events, a request's head, a move's arguments, a cursor) is what
/// JSONDecoder reads from it.
func agreesWithJSONDecoder(_ line: Data) {
    let decoder = JSONDecoder()
    line.withUnsafeBytes { raw in
        if let event = ControlEvent(jsonLine: raw) {
            check((try? decoder.decode(ControlEvent.self, from: line)) == event, "an event read without JSONDecoder differs")
        }
        if let cursor = Commands.Cursor.Arguments(requestLine: raw) {
            check((try? decoder.decode(Commands.Cursor.Arguments.self, from: line)) == cursor, "a cursor read without JSONDecoder differs")
        }
        guard let members = JSONLineReader.value(raw)?.object else { return }
        if let head = RequestHead(members: members) {
            let read = try? decoder.decode(RequestHead.self, from: line)
            check(read?.id == head.id && read?.command == head.command, "a request's head read without JSONDecoder differs")
        }
        if let move = Commands.MoveArguments(members: members) {
            check((try? decoder.decode(Commands.MoveArguments.self, from: line)) == move, "a move read without JSONDecoder differs")
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzControl(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let piece = Int(input.byte()) + 1
    let bytes = input.rest()
    guard let router = Host.get()?.router else { return 0 }
    let channel = EmbeddedChannel(handler: ByteToMessageHandler(LineFramer(maximumLength: ControlProtocol.maximumLineLength)))
    func drain() {
        while let frame = try? channel.readInbound(as: LineFrame.self) {
            guard case .line(let buffer) = frame, buffer.readableBytes > 0 else { continue }
            check(buffer.readableBytes <= ControlProtocol.maximumLineLength, "a line over the limit got through")
            agreesWithJSONDecoder(Data(buffer.readableBytesView))
            let reply = answer(router, Data(buffer.readableBytesView))
            check(reply.last == 0x0A && !reply.dropLast().contains(0x0A), "an answer is not one line")
            check((try? JSONSerialization.jsonObject(with: reply)) is [String: Any], "an answer is not a JSON object")
        }
    }
    var offset = 0
    while offset < bytes.count {
        let end = min(bytes.count, offset + piece)
        do { try channel.writeInbound(ByteBuffer(bytes: bytes[offset..<end])) } catch { break }
        offset = end
        drain()
    }
    _ = try? channel.finish()
    drain()
    return 0
}

@_cdecl("FuzzControl_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    writeSeedsIfAsked {
        seeds()
    }
    return runFuzzer(argc, argv, fuzzControl)
}

func seeds() -> [[UInt8]] {
    do {
        func line(_ command: String, _ arguments: some Encodable & Sendable) -> [UInt8] {
            Array((try? ControlCoding.line(Request(id: .int(1), command: command, arguments: arguments))) ?? Data())
        }
        let requests: [[UInt8]] = [
            line(Commands.Status.name, Empty()),
            line(Commands.Games.name, Empty()),
            line(Commands.New.name, Commands.New.Arguments(width: 8, height: 6, mines: 5, noGuess: true, seed: 3, startX: 1, startY: 1, questionMarks: true)),
            line(Commands.New.name, Commands.New.Arguments(preset: "expert")),
            line(Commands.Show.name, Commands.GameArguments(game: nil, peek: false)),
            line(Commands.Reveal.name, Commands.MoveArguments(game: nil, x: 0, y: 0)),
            line(Commands.Flag.name, Commands.MoveArguments(game: nil, x: 2, y: 3, mark: "flag")),
            line(Commands.Chord.name, Commands.MoveArguments(game: "0", x: 4, y: 4)),
            line(Commands.Hint.name, Commands.GameArguments(game: nil)),
            line(Commands.Scores.name, Empty()),
            line(Commands.Invite.name, Empty()),
            line(Commands.Join.name, Commands.Join.Arguments(code: InviteCode.encode(Fixtures.circle))),
            line(Commands.Peers.name, Commands.Peers.Arguments(all: true)),
            line(Commands.Connect.name, Commands.Connect.Arguments(address: "[::1]:7455")),
            line(Commands.Subscribe.name, Commands.Subscribe.Arguments(game: nil)),
        ]
        // Event lines, as a viewer reads them (the daemon refuses them as requests).
        let presence = PresenceInfo(peer: "7ZQ4M", name: "Mum \"é\"", game: "0123", x: 3, y: 4, colour: 2, own: true)
        let events = [
            ControlEvent(
                event: .cells, game: "0123", cells: [CellChange(x: 1, y: 2, value: "3")], status: .playing, minesLeft: 9, byPeer: "7ZQ4M", x: 1, y: 2,
                progress: 0.25),
            ControlEvent(event: .presence, presence: presence),
            ControlEvent(event: .point, game: "0123", byName: "Mum", x: 3, y: 4, presence: presence),
        ].map { Array((try? $0.jsonLine()) ?? Data()) }
        let cursor = Commands.Cursor.Arguments(game: "0123", x: 5, y: 6).requestLine
        return (requests + events + [cursor]).map { [255] + $0 } + [[3] + requests[2] + requests[5] + requests[6] + requests[0]]
    }
}
