import Foundation
import NIOCore
import NIOEmbedded
import ServiceLifecycle
import SweeperControl
import SweeperCrypto
import SweeperWeb
import Testing

@testable import SweeperDaemon

/// One vocabulary for the whole control protocol: every key of every
/// answer and event a fresh two-device circle gives is in the registry,
/// `Docs/control-schema.json`, and its value is of the key's kind (a peer
/// id where a peer is named, an instant in ms since 1970 where a field
/// ends in `At`, …). An unknown key fails, naming the command and the path.
@Suite(.serialized) struct ControlSchemaTests {
    static let registryFile = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Docs/control-schema.json")

    /// The registry: field name → kind.
    static func registry() throws -> [String: String] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: registryFile)) as? [String: Any]
        let fields = try #require(object?["fields"] as? [String: String])
        let kinds = try #require(object?["kinds"] as? [String: String])
        for (key, kind) in fields { #expect(kinds[kind] != nil, "\(key)'s kind \(kind) is not described") }
        return fields
    }

    /// A JSON value as the wire has it: a boolean is never a number, an
    /// integer never a fraction.
    indirect enum Value: Decodable, CustomStringConvertible {
        case bool(Bool), int(Int64), number(Double), string(String), list([Value]), object([String: Value]), null

        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if c.decodeNil() {
                self = .null
            } else if let v = try? c.decode(Bool.self) {
                self = .bool(v)
            } else if let v = try? c.decode(Int64.self) {
                self = .int(v)
            } else if let v = try? c.decode(Double.self) {
                self = .number(v)
            } else if let v = try? c.decode(String.self) {
                self = .string(v)
            } else if let v = try? c.decode([Value].self) {
                self = .list(v)
            } else {
                self = .object(try c.decode([String: Value].self))
            }
        }

        var description: String {
            switch self {
            case .bool(let v): "\(v)"
            case .int(let v): "\(v)"
            case .number(let v): "\(v)"
            case .string(let v): "\"\(v)\""
            case .list(let v): "[\(v.map(\.description).joined(separator: ", "))]"
            case .object(let v): "{\(v.keys.sorted().joined(separator: ", "))}"
            case .null: "null"
            }
        }

        static func parse(_ data: Data) -> Value? { try? JSONDecoder().decode(Value.self, from: data) }
        subscript(_ key: String) -> Value? { if case .object(let o) = self { o[key] } else { nil } }
        var string: String? { if case .string(let s) = self { s } else { nil } }
        var list: [Value]? { if case .list(let l) = self { l } else { nil } }
    }

    /// The problems of `value`, found at `path` in the answer to `command`:
    /// each key checked against `fields`, then its value against the kind.
    static func problems(_ value: Value, at path: String, of command: String, fields: [String: String]) -> [String] {
        switch value {
        case .list(let list):
            return list.enumerated().flatMap { problems($1, at: "\(path)[\($0)]", of: command, fields: fields) }
        case .object(let object):
            var out: [String] = []
            for (key, member) in object.sorted(by: { $0.key < $1.key }) {
                let here = path.isEmpty ? key : "\(path).\(key)"
                guard let kind = fields[key] else {
                    out.append("\(command): unknown key \(here)")
                    continue
                }
                if !fits(member, kind) { out.append("\(command): \(here) is \(member), not \(kind)") }
                out += problems(member, at: here, of: command, fields: fields)
            }
            return out
        default:
            return []
        }
    }

    static let peerPattern = #"^[0-9A-HJKMNP-TV-Z]{4,}(-[0-9A-HJKMNP-TV-Z]+)+$"#
    static func isPeer(_ v: Value) -> Bool { v.string?.range(of: peerPattern, options: .regularExpression) != nil }
    static func isGame(_ v: Value) -> Bool { v.string?.range(of: "^[0-9a-f]{32}$", options: .regularExpression) != nil }
    static func isObject(_ v: Value) -> Bool { if case .object = v { true } else { false } }

    /// Whether `v` is of `kind`.
    static func fits(_ v: Value, _ kind: String) -> Bool {
        func all(_ check: (Value) -> Bool) -> Bool { v.list.map { $0.allSatisfy(check) } ?? false }
        switch (kind, v) {
        case ("peer", _), ("invitation", _): return isPeer(v)
        case ("peers", _): return all(isPeer)
        case ("game", _): return isGame(v)
        case ("games", _): return all(isGame)
        case ("device", .string(let s)): return !s.isEmpty && !isPeer(v)
        case ("instant", .int(let n)): return (1_577_836_800_000...4_102_444_800_000).contains(n)
        case ("millis", .int(let n)), ("count", .int(let n)): return n >= 0
        case ("int", .int): return true
        case ("ints", _): return all { if case .int = $0 { true } else { false } }
        case ("ratio", .int), ("ratio", .number): return true
        case ("bool", .bool): return true
        case ("name", .string): return !isPeer(v)
        case ("names", _): return all { $0.string != nil && !isPeer($0) }
        case ("string", .string): return true
        case ("strings", _): return all { $0.string != nil }
        case ("day", .string(let s)): return s.range(of: #"^\d{4}-\d{2}-\d{2}$"#, options: .regularExpression) != nil
        case ("status", .string(let s)): return ["playing", "won", "lost"].contains(s)
        case ("object", .object): return true
        case ("objects", _): return all(isObject)
        case ("object|objects", _): return isObject(v) || all(isObject)
        case ("bool|object", .bool), ("bool|object", .object): return true
        default: return false
        }
    }

    /// Sends `line` to `router`; returns its result, or records why not.
    static func ask(_ router: ControlRouter, _ line: String) async -> Value? {
        guard case .answer(let data) = await router.reply(to: Data(line.utf8)), let answer = Value.parse(data) else { return nil }
        if let error = answer["error"] { return .object(["error": error]) }
        return answer["result"]
    }

    @Test func theRegistryRefusesTheVersionOneVocabulary() throws {
        let fields = try Self.registry()
        // A version 1 answer: every one of its keys is refused.
        let old = try #require(
            Value.parse(
                Data(
                    #"""
                    {"peerID": "ABCDE-FGHJK", "id": "0123", "elapsedSeconds": 3, "lastSeenSecondsAgo": 1.5, "roundTripMs": 0.4,
                     "created": 1795000000.5, "heldBy": ["Mum"], "trippedBy": "Max", "by": "Mum", "seconds": 4, "millis": 4000}
                    """#.utf8)))
        let found = Self.problems(old, at: "", of: "v1", fields: fields)
        #expect(found.count == 11 && found.allSatisfy { $0.contains("unknown key") }, "\(found)")
        // A name where a peer id belongs, seconds where an instant does, a fraction or a boolean for a count: refused too.
        #expect(!Self.fits(.string("Mum"), "peer") && !Self.fits(.int(1_795_000_000), "instant") && !Self.fits(.number(1.5), "count"))
        #expect(!Self.fits(.string("ABCDE-FGHJK-MNPQR"), "name") && !Self.fits(.bool(true), "count") && !Self.fits(.number(2e12), "instant"))
        #expect(Self.fits(.string("ABCDE-FGHJK-MNPQR"), "peer") && Self.fits(.int(1_795_000_000_000), "instant"))
        let renamed = Self.problems(.object(["trippedByPeer": .string("Max")]), at: "", of: "v2", fields: fields)
        #expect(renamed == ["v2: trippedByPeer is \"Max\", not peer"], "\(renamed)")
    }

    @Test func everyAnswerAndEventOfATwoDeviceCircleSpeaksTheRegistry() async throws {
        let fields = try Self.registry()
        let ada = try await DaemonFixture(webPort: 0)
        let bob = try await DaemonFixture()
        let loop = ada.loop
        // Their peer networks run as `Daemon.run` runs them: links, sync, admissions.
        // Ada serves her web board on a free loopback port, for `web` and `player-add`.
        let webServer = WebServer(board: ada.core.web, lan: false)
        let services: [any Service] = ada.core.network.services + bob.core.network.services + [webServer]
        let running = services.map { service in Task { try? await service.run() } }
        defer { for task in running { task.cancel() } }
        // Ada's subscriber sees every event of the session.
        guard case .subscribe(_, let subscription) = await ada.router.reply(to: Data(#"{"id":"e","command":"subscribe"}"#.utf8)) else {
            Issue.record("no subscription")
            return
        }
        let viewer = try await loop.submit {
            let channel = EmbeddedChannel()
            subscription.attach(channel)
            return NIOLoopBound(channel, eventLoop: loop)
        }.get()

        var answers: [(command: String, result: Value)] = []
        var refused: [String] = []
        func send(_ router: ControlRouter, _ line: String, mayFail: Bool = false) async -> Value {
            let command = Value.parse(Data(line.utf8))?["command"]?.string ?? line
            let result = await Self.ask(router, line) ?? .null
            if let error = result["error"] {
                if !mayFail { Issue.record("\(line) failed: \(error["code"]?.string ?? "") \(error["message"]?.string ?? "")") }
                refused.append(command)
                return .null
            }
            answers.append((command, result))
            return result
        }

        // Bob joins Ada's circle over loopback, as `sweeper join --address` does.
        let invite = await send(ada.router, #"{"id":1,"command":"invite"}"#)
        let listen = try #require((await send(ada.router, #"{"id":1,"command":"status"}"#))["listening"]?.list?.first?.string)
        let code = try #require(invite["code"]?.string)
        _ = await send(bob.router, #"{"id":1,"command":"join","code":"\#(code)","address":"\#(listen)","waitSeconds":10}"#)
        let bobID = try #require((await send(bob.router, #"{"id":1,"command":"status"}"#))["peer"]?.string)
        let linked = await Self.until(10) {
            let peers = await Self.ask(ada.router, #"{"id":1,"command":"peers"}"#)?["peers"]?.list ?? []
            return peers.contains { $0["peer"]?.string == bobID && $0["state"]?.string == "connected" && $0["sync"] != nil }
        }
        #expect(linked, "bob never linked to ada")
        _ = await send(bob.router, #"{"id":1,"command":"profile","name":"bob","colour":"green"}"#)

        // Games: one lost, one won with help, one of Bob's that Ada only sees.
        _ = await send(ada.router, #"{"id":1,"command":"sync","mode":"mine"}"#)
        let lost = await send(ada.router, #"{"id":1,"command":"new","preset":"beginner","seed":7}"#)
        let lostGame = try #require(lost["game"]?.string)
        _ = await send(ada.router, #"{"id":1,"command":"cursor","game":"\#(lostGame)","x":1,"y":1}"#, mayFail: true)
        _ = await send(ada.router, #"{"id":1,"command":"hint","game":"\#(lostGame)"}"#)
        _ = await send(ada.router, #"{"id":1,"command":"point","game":"\#(lostGame)","x":1,"y":1}"#)
        let peek = await send(ada.router, #"{"id":1,"command":"show","game":"\#(lostGame)","peek":true}"#)
        let layoutRows = peek["mineLayout"]?.list?.compactMap { $0.string }
        let boardRows = peek["board"]?.list?.compactMap { $0.string }
        let layout = try #require(layoutRows)
        let board = try #require(boardRows)
        let cells = layout.enumerated().flatMap { y, row in row.enumerated().map { (x: $0.offset, y: y, mine: $0.element == "*") } }
        let number = cells.first { c in !c.mine && Array(board[c.y])[c.x].isNumber }
        if let n = number { _ = await send(ada.router, #"{"id":1,"command":"chord","game":"\#(lostGame)","x":\#(n.x),"y":\#(n.y)}"#) }
        let covered = cells.first { c in !c.mine && Array(board[c.y])[c.x] == "#" }
        if let c = covered { _ = await send(ada.router, #"{"id":1,"command":"flag","game":"\#(lostGame)","x":\#(c.x),"y":\#(c.y),"mark":"flag"}"#) }
        let mine = try #require(cells.first { $0.mine })
        _ = await send(ada.router, #"{"id":1,"command":"reveal","game":"\#(lostGame)","x":\#(mine.x),"y":\#(mine.y)}"#)
        _ = await send(ada.router, #"{"id":1,"command":"show","game":"\#(lostGame)"}"#)
        _ = await send(ada.router, #"{"id":1,"command":"replay","game":"\#(lostGame)"}"#)
        _ = await send(ada.router, #"{"id":1,"command":"archive","game":"\#(lostGame)"}"#)
        _ = await send(ada.router, #"{"id":1,"command":"games","archived":true}"#)
        _ = await send(ada.router, #"{"id":1,"command":"archive","game":"\#(lostGame)","archived":false}"#)
        let won = try await ScoresTests.win(
            ada, try await show(ada.router, (await send(ada.router, #"{"id":1,"command":"new","preset":"beginner"}"#))["game"]?.string ?? ""), hint: true)
        _ = await send(ada.router, #"{"id":1,"command":"show","game":"\#(won.game)"}"#)
        let bobs = try #require((await send(bob.router, #"{"id":1,"command":"new","preset":"beginner","seed":3}"#))["game"]?.string)
        let seen = await Self.until(10) {
            (await Self.ask(ada.router, #"{"id":1,"command":"games","available":true}"#)?["available"]?.list ?? []).contains { $0["game"]?.string == bobs }
        }
        #expect(seen, "ada never saw bob's game")
        _ = await send(ada.router, #"{"id":1,"command":"games","available":true}"#)
        _ = await send(ada.router, #"{"id":1,"command":"follow","game":"\#(bobs)"}"#)
        _ = await Self.until(10) { (await Self.ask(ada.router, #"{"id":1,"command":"show","game":"\#(bobs)"}"#)?["game"]?.string) != nil }
        _ = await send(ada.router, #"{"id":1,"command":"forget","game":"\#(bobs)"}"#)
        _ = await send(ada.router, #"{"id":1,"command":"sync"}"#)
        let race = await send(ada.router, #"{"id":1,"command":"new","preset":"beginner","race":true,"players":["\#(bobID)"]}"#)
        if let raceGame = race["game"]?.string {
            _ = await send(ada.router, #"{"id":1,"command":"resign","game":"\#(raceGame)"}"#)
        }
        let chosen = await send(ada.router, #"{"id":1,"command":"new","preset":"beginner","players":["bob"]}"#)
        if let chosenGame = chosen["game"]?.string {
            _ = await send(ada.router, #"{"id":1,"command":"add-players","game":"\#(chosenGame)","players":["bob"]}"#, mayFail: true)
        }
        _ = await send(ada.router, #"{"id":1,"command":"daily"}"#)

        // Records, the circle, the peers and the rest.
        for line in [
            #"{"id":1,"command":"scores"}"#, #"{"id":1,"command":"scores","player":"ada"}"#, #"{"id":1,"command":"scores","daily":true}"#,
            #"{"id":1,"command":"games"}"#, #"{"id":1,"command":"status"}"#, #"{"id":1,"command":"peers","all":true}"#,
            #"{"id":1,"command":"circle"}"#, #"{"id":1,"command":"presence"}"#, #"{"id":1,"command":"profile"}"#,
            #"{"id":1,"command":"invitations"}"#, #"{"id":1,"command":"web-devices"}"#, #"{"id":1,"command":"player-list"}"#,
            #"{"id":1,"command":"circle-remove","device":"bob","check":true}"#,
            #"{"id":1,"command":"circle-invitations","device":"bob","allowed":false}"#, #"{"id":1,"command":"circle"}"#,
            #"{"id":1,"command":"circle-invitations","device":"bob","allowed":true}"#,
            #"{"id":1,"command":"connect","address":"\#(listen)","check":true}"#,
            #"{"id":1,"command":"backup","path":"\#(ada.directory)/backup-\#(UUID().uuidString).db"}"#,
        ] { _ = await send(ada.router, line) }
        let another = await send(ada.router, #"{"id":1,"command":"invite","validSeconds":60}"#)
        _ = await send(ada.router, #"{"id":1,"command":"invite-revoke","invitation":"\#(another["invitation"]?.string ?? "")"}"#)
        _ = await send(bob.router, #"{"id":1,"command":"invitations"}"#)
        _ = await send(bob.router, #"{"id":1,"command":"circle"}"#)
        _ = await Self.until(10) { await Self.ask(ada.router, #"{"id":1,"command":"web"}"#)?["url"] != nil }
        _ = await send(ada.router, #"{"id":1,"command":"web"}"#)
        _ = await send(ada.router, #"{"id":1,"command":"web-lan"}"#)
        _ = await send(ada.router, #"{"id":1,"command":"player-add","name":"Cat"}"#)
        _ = await send(ada.router, #"{"id":1,"command":"player-pair","player":"Cat"}"#)
        _ = await send(ada.router, #"{"id":1,"command":"web-pair"}"#, mayFail: true)
        _ = await send(ada.router, #"{"id":1,"command":"player-list"}"#)
        _ = await send(ada.router, #"{"id":1,"command":"circle-admin","device":"bob"}"#)
        _ = await send(ada.router, #"{"id":1,"command":"circle"}"#)

        // Every answer, then every event, against the registry.
        var found: [String] = []
        for (command, result) in answers { found += Self.problems(result, at: "", of: command, fields: fields) }
        let events = try await loop.submit {
            var lines: [String] = []
            while let buffer = try viewer.value.readOutbound(as: ByteBuffer.self) {
                lines += String(decoding: buffer.readableBytesView, as: UTF8.self).split(separator: "\n").map(String.init)
            }
            return lines
        }.get()
        var kinds: Set<String> = []
        for line in events {
            guard let event = Value.parse(Data(line.utf8)), let kind = event["event"]?.string else { continue }  // the subscription's own answer
            kinds.insert(kind)
            found += Self.problems(event, at: "", of: "event \(kind)", fields: fields)
        }
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
        let answered = Set(answers.map(\.command))
        for command in [
            "status", "peers", "circle", "games", "new", "show", "reveal", "flag", "replay", "hint", "scores", "daily",
            "invite", "invitations", "profile", "presence", "sync", "follow", "forget", "archive", "connect", "web-devices",
            "player-list", "backup", "join", "point", "resign", "invite-revoke", "circle-remove", "circle-admin", "web", "player-add",
            "player-pair", "web-lan", "circle-invitations", "chord", "add-players",
        ] {
            #expect(answered.contains(command), "\(command) was not answered (refused: \(refused))")
        }
        for kind in ["game-added", "cells", "game-changed", "game-forgotten", "peer-changed", "point", "profile-changed"] {
            #expect(kinds.contains(kind), "no \(kind) event came (came: \(kinds.sorted()))")
        }
        subscription.end()
        await bob.cleanup()
        await ada.cleanup()
    }

    /// Asks `check` every 50 ms for at most `seconds`.
    static func until(_ seconds: Double, _ check: () async -> Bool) async -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if await check() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }
}
