import Foundation
import SweeperTestSupport
import Testing

/// Players hosted by one daemon, with real daemons linked on loopback: each
/// plays from a browser (the web board's WebSocket) as themselves, every
/// device attributes their moves to them, a removed player's browser is
/// logged out, and the host keeps its players across a restart.
@Suite(.serialized) struct HostedPlayersTests {
    /// A browser logged in as the hosted player of `url` (a login address
    /// from `player add` or `player pair`): its session cookie and a
    /// WebSocket on the board.
    struct Browser {
        let cookie: String
        let socket: WebTestClient
        let port: Int
        var next = 1

        init(url: String) throws {
            port = try #require(WebTestClient.port(of: url))
            let login = try WebTestClient(port: port).request("GET", WebTestClient.target(of: url), headers: [("Host", "127.0.0.1:\(port)")])
            #expect(login.status == 200, "the login address: \(login.status)")
            cookie = try #require(login.headers["set-cookie"]?.split(separator: ";").first.map(String.init))
            socket = try WebTestClient(port: port)
            let host = "127.0.0.1:\(port)"
            #expect(try socket.upgrade(host: host, origin: "http://" + host, cookie: cookie).status == 101)
        }

        /// Sends a request and reads its answer (skipping events).
        mutating func ask(_ command: String, _ fields: String = "") throws -> [String: Any] {
            let id = next
            next += 1
            try socket.sendText(#"{"id": \#(id), "command": "\#(command)"\#(fields.isEmpty ? "" : ", " + fields)}"#)
            for _ in 0..<50 {
                guard let answer = try socket.readJSON() else { break }
                if answer["id"] as? Int == id { return answer }
            }
            throw HarnessError.socket("no answer to \(command)")
        }
    }

    static func covered(_ h: DaemonHarness, _ game: String) throws -> [(x: Int, y: Int)] {
        let rows = try #require(try h.json(["show", game])["board"] as? [String])
        return rows.enumerated().flatMap { y, row in row.enumerated().filter { $0.element == "#" }.map { (x: $0.offset, y: y) } }
    }

    /// The family laptop's daemon and Dad's, in one circle, linked on loopback.
    static func laptopAndDad() throws -> (host: DaemonHarness, dad: DaemonHarness) {
        let host = try DaemonHarness()
        let dad = try DaemonHarness()
        do {
            try host.start(name: "Laptop")
            try dad.start(name: "Dad")
            #expect(try dad.join(host).status == 0)
            return (host, dad)
        } catch {
            host.cleanup()
            dad.cleanup()
            throw error
        }
    }

    @Test func twoPlayersOfOneHostAndAPlayerOfAnotherPlayOneGameEachAsThemselves() throws {
        let (host, dad) = try Self.laptopAndDad()
        defer {
            host.cleanup()
            dad.cleanup()
        }

        // Two players hosted by the laptop, each with a key of their own.
        let ann = try host.json(["player", "add", "Ann", "--colour", "green"])
        let ben = try host.json(["player", "add", "Ben"])
        let annID = try #require((ann["player"] as? [String: Any])?["peer"] as? String)
        let benID = try #require((ben["player"] as? [String: Any])?["peer"] as? String)
        #expect(annID != benID)
        #expect(try host.cli(["player", "add", "ann"]).status != 0, "a second player of one name")
        let hostID = try #require(try host.json(["status"])["peer"] as? String)
        #expect(![annID, benID].contains(hostID))

        // Dad's daemon sees them as devices of the circle, hosted by the laptop.
        var dadsCircle: [[String: Any]] = []
        _ = eventually(10) {
            dadsCircle = (try dad.json(["circle"])["members"] as? [[String: Any]]) ?? []
            return dadsCircle.contains { $0["peer"] as? String == benID && $0["name"] as? String == "Ben" }
        }
        let annThere = try #require(dadsCircle.first { $0["peer"] as? String == annID })
        #expect(annThere["hostedByPeer"] as? String == hostID)
        #expect(annThere["hostedByName"] as? String == "Laptop")
        #expect(try dad.cli(["circle"]).stdout.contains("Ann (hosted by Laptop)"))
        let laptopThere = ((try dad.json(["peers"])["peers"] as? [[String: Any]]) ?? []).first { $0["peer"] as? String == hostID }
        #expect(laptopThere?["hostNames"] as? [String] == ["Ann", "Ben"], "Dad's peers: \(laptopThere ?? [:])")
        #expect(try dad.cli(["peers"]).stdout.contains("Laptop (hosts Ann, Ben)"))

        // Each browser plays as its player: status says who.
        let annURL = try #require(ann["url"] as? String)
        var annBrowser = try Browser(url: annURL)
        var benBrowser = try Browser(url: try #require(ben["url"] as? String))
        #expect(((try annBrowser.ask("status"))["result"] as? [String: Any])?["peer"] as? String == annID)
        #expect(((try benBrowser.ask("status"))["result"] as? [String: Any])?["name"] as? String == "Ben")
        // A pairing works once.
        #expect(
            try WebTestClient(port: annBrowser.port).request("GET", WebTestClient.target(of: annURL), headers: [("Host", "127.0.0.1:\(annBrowser.port)")])
                .status == 403)

        // Ann starts a game from her phone; Ann, Ben and Dad each flag a cell.
        let made = try annBrowser.ask("new", #""preset": "beginner", "seed": 11"#)
        let game = try #require((made["result"] as? [String: Any])?["game"] as? String)
        _ = eventually(5, every: 0.05) { try dad.cli(["show", game]).status == 0 }
        let cells = try Self.covered(host, game)
        #expect(cells.count >= 3)
        #expect((try annBrowser.ask("flag", #""game": "\#(game)", "x": \#(cells[0].x), "y": \#(cells[0].y)"#))["ok"] as? Bool == true)
        #expect((try benBrowser.ask("flag", #""game": "\#(game)", "x": \#(cells[1].x), "y": \#(cells[1].y)"#))["ok"] as? Bool == true)
        #expect(try dad.cli(["flag", game, "\(cells[2].x)", "\(cells[2].y)"]).status == 0)

        // Every device attributes each move to its player.
        func authors(_ h: DaemonHarness) throws -> [String: String] {
            let moves = (try h.json(["replay", game])["moves"] as? [[String: Any]]) ?? []
            return Dictionary(moves.compactMap { m in (m["authorPeer"] as? String).map { ($0, m["name"] as? String ?? "") } }, uniquingKeysWith: { a, _ in a })
        }
        let dadID = try #require(try dad.json(["status"])["peer"] as? String)
        var seen: [String: String] = [:]
        _ = eventually(10) {
            seen = try authors(dad)
            return seen.count >= 3
        }
        #expect(seen[annID] == "Ann" && seen[benID] == "Ben" && seen[dadID] == "Dad", "Dad's replay: \(seen)")
        #expect(seen[hostID] == nil, "a move of a hosted player was signed as the host")
        let onHost = try authors(host)
        #expect(onHost[annID] == "Ann" && onHost[benID] == "Ben" && onHost[dadID] == "Dad", "the host's replay: \(onHost)")
        let players = (try dad.json(["show", game])["players"] as? [[String: Any]]) ?? []
        #expect(Set(players.compactMap { $0["name"] as? String }).isSuperset(of: ["Ann", "Ben", "Dad"]))

        // Ben reveals until a mine goes off: the ending names him everywhere.
        var tripped: String?
        var ended = false
        for cell in try Self.covered(host, game).dropFirst(3).prefix(81) {
            let answer = try benBrowser.ask("reveal", #""game": "\#(game)", "x": \#(cell.x), "y": \#(cell.y)"#)
            let result = answer["result"] as? [String: Any]
            if result?["status"] as? String == "lost" {
                tripped = result?["trippedByName"] as? String
                ended = true
                break
            }
            if result?["status"] as? String == "won" {
                ended = true
                break
            }
        }
        #expect(ended, "Ben's reveals never ended the game")
        if let tripped {
            #expect(tripped == "Ben")
            var there: String?
            _ = eventually(10) {
                there = try dad.json(["show", game])["trippedByPeer"] as? String
                return there != nil
            }
            #expect(there == benID, "Dad's daemon names who tripped the mine")
        }

        // Removing Ben logs his browser out at once and takes him out of the circle.
        let unasked = try host.cli(["player", "remove", "Ben"])
        #expect(unasked.status == 2 && unasked.stderr.contains("--yes"), "removed without asking: \(unasked.stderr)")
        let removed = try host.json(["player", "remove", "Ben", "--yes"])
        #expect(removed["removedFromCircle"] as? Bool == true)
        let closed = try? benBrowser.socket.readFrame()
        #expect(closed == nil || closed?.opcode == 0x8, "Ben's page stayed open")
        let again = try WebTestClient(port: benBrowser.port)
        let hostPort = "127.0.0.1:\(benBrowser.port)"
        #expect(try again.upgrade(host: hostPort, origin: "http://" + hostPort, cookie: benBrowser.cookie).status == 403, "Ben's cookie still opens a page")
        let dadSaw = eventually(10) {
            ((try dad.json(["circle"])["removed"] as? [[String: Any]]) ?? []).contains { $0["peer"] as? String == benID }
        }
        #expect(dadSaw, "Dad's daemon never heard that Ben was removed")
        #expect((try host.json(["player", "list"])["players"] as? [[String: Any]])?.count == 1)

        // The host restarts: Ann keeps her key, name and a browser that logs in again as her.
        host.stop()
        try host.start(name: "Laptop")
        let list = try #require(try host.json(["player", "list"])["players"] as? [[String: Any]])
        #expect(list.count == 1 && list.first?["peer"] as? String == annID && list.first?["name"] as? String == "Ann")
        let relogin = try host.json(["web", "--no-open", "--player", "Ann"])
        var annAgain = try Browser(url: try #require(relogin["url"] as? String))
        #expect(((try annAgain.ask("status"))["result"] as? [String: Any])?["peer"] as? String == annID)
        let left = try #require(try Self.covered(host, game).first)
        let status = try host.json(["show", game])["status"] as? String
        if status == "playing" {
            #expect((try annAgain.ask("flag", #""game": "\#(game)", "x": \#(left.x), "y": \#(left.y)"#))["ok"] as? Bool == true)
            #expect(try authors(host)[annID] == "Ann")
        }
    }
    @Test func hostedPlayersRaceEachOnTheirOwnBoardAndReadOnlyTheirPrivateGames() throws {
        let (host, dad) = try Self.laptopAndDad()
        defer {
            host.cleanup()
            dad.cleanup()
        }
        let ann = try host.json(["player", "add", "Ann"])
        let ben = try host.json(["player", "add", "Ben"])
        let annID = try #require((ann["player"] as? [String: Any])?["peer"] as? String)
        let benID = try #require((ben["player"] as? [String: Any])?["peer"] as? String)
        var annBrowser = try Browser(url: try #require(ann["url"] as? String))
        var benBrowser = try Browser(url: try #require(ben["url"] as? String))
        _ = eventually(10) {
            ((try dad.json(["circle"])["members"] as? [[String: Any]]) ?? []).contains { $0["peer"] as? String == benID }
        }

        // Ann races Ben: the race names both, each moves on a board of their own.
        let made = try annBrowser.ask("new", #""preset": "beginner", "seed": 5, "race": true, "players": ["Ben"]"#)
        let race = try #require((made["result"] as? [String: Any])?["game"] as? String, "\(made)")
        let shownToBen = try #require((try benBrowser.ask("show", #""game": "\#(race)""#))["result"] as? [String: Any])
        #expect((shownToBen["race"] as? [String: Any])?["shownPeer"] as? String == benID, "Ben's page shows Ben's board")
        let racers = (((shownToBen["race"] as? [String: Any])?["racers"] as? [[String: Any]]) ?? []).compactMap { $0["peer"] as? String }
        #expect(Set(racers) == [annID, benID], "racers: \(shownToBen["race"] ?? "none")")
        let rows = try #require(shownToBen["board"] as? [String])
        let cell = try #require(rows.enumerated().lazy.flatMap { y, row in row.enumerated().filter { $0.element == "#" }.map { (x: $0.offset, y: y) } }.first)
        #expect((try benBrowser.ask("flag", #""game": "\#(race)", "x": \#(cell.x), "y": \#(cell.y)"#))["ok"] as? Bool == true)
        let annBoard = try #require(((try annBrowser.ask("show", #""game": "\#(race)""#))["result"] as? [String: Any])?["board"] as? [String])
        #expect(Array(annBoard[cell.y])[cell.x] != "F", "Ben's flag landed on Ann's board")
        // Both give up: the race ends with one table on every device.
        #expect((try annBrowser.ask("resign", #""game": "\#(race)""#))["ok"] as? Bool == true)
        #expect((try benBrowser.ask("resign", #""game": "\#(race)""#))["ok"] as? Bool == true)
        func table(_ h: DaemonHarness) throws -> [String: Any]? { try h.json(["show", race])["race"] as? [String: Any] }
        var there: [String: Any]?
        _ = eventually(10) {
            there = try table(dad)
            return there?["over"] as? Bool == true
        }
        let here = try #require(try table(host))
        #expect(here["over"] as? Bool == true && there?["over"] as? Bool == true)
        func standings(_ t: [String: Any]?) -> String {
            ((t?["racers"] as? [[String: Any]]) ?? []).map { r in
                r.keys.sorted().filter { $0 != "shownPeer" }.map { "\($0)=\(r[$0] ?? "")" }.joined(separator: ",")
            }.sorted().joined(separator: ";")
        }
        #expect(!standings(here).isEmpty && standings(here) == standings(there), "the host's table \(standings(here)) against Dad's \(standings(there))")

        // The board of the day: one each, the same layout.
        let annDaily = try #require((try annBrowser.ask("daily"))["result"] as? [String: Any])
        let benDaily = try #require((try benBrowser.ask("daily"))["result"] as? [String: Any])
        #expect(annDaily["game"] as? String != nil && annDaily["game"] as? String != benDaily["game"] as? String, "Ann and Ben share a board of the day")
        #expect((try annBrowser.ask("daily"))["result"].flatMap { ($0 as? [String: Any])?["game"] as? String } == annDaily["game"] as? String)

        // A private game of Ann and Dad: Ann and Dad read it; Ben and the host's own player do not,
        // nor does Ben's page hear of it.
        var benEvents = try Browser(url: try #require(try host.json(["web", "--no-open", "--player", "Ben"])["url"] as? String))
        #expect((try benEvents.ask("subscribe"))["ok"] as? Bool == true)
        let secret = try annBrowser.ask("new", #""preset": "beginner", "seed": 6, "privateGame": true, "players": ["Dad"]"#)
        let hidden = try #require((secret["result"] as? [String: Any])?["game"] as? String, "\(secret)")
        // An open game after it: once Ben's page has its event, it had every event before it.
        let marker = try annBrowser.ask("new", #""preset": "beginner", "seed": 7"#)
        let open = try #require((marker["result"] as? [String: Any])?["game"] as? String)
        var heard: [String] = []
        for _ in 0..<50 {
            guard let event = try benEvents.socket.readJSON() else { break }
            if let game = event["game"] as? String { heard.append(game) }
            if heard.contains(open) { break }
        }
        #expect(heard.contains(open), "Ben's page heard nothing of the open game after it: \(heard)")
        #expect(!heard.contains(hidden), "Ben's page heard of a private game of Ann and Dad")
        #expect((try annBrowser.ask("show", #""game": "\#(hidden)""#))["ok"] as? Bool == true)
        #expect((try benBrowser.ask("show", #""game": "\#(hidden)""#))["ok"] as? Bool == false, "Ben read a private game of Ann and Dad")
        #expect(try host.cli(["show", hidden]).status != 0, "the host's own player read a private game of Ann and Dad")
        let dadReads = eventually(10) { try dad.cli(["show", hidden]).status == 0 }
        #expect(dadReads, "Dad cannot read the private game Ann made with him")
    }

    @Test func removingAHostRemovesThePlayersItHostsWithIt() throws {
        // Dad founds the circle; the laptop joins and hosts Ann.
        let dad = try DaemonHarness()
        let laptop = try DaemonHarness()
        defer {
            dad.cleanup()
            laptop.cleanup()
        }
        try dad.start(name: "Dad")
        try laptop.start(name: "Laptop")
        #expect(try laptop.join(dad).status == 0)
        let ann = try laptop.json(["player", "add", "Ann"])
        let annID = try #require((ann["player"] as? [String: Any])?["peer"] as? String)
        #expect(eventually(10) { ((try dad.json(["circle"])["members"] as? [[String: Any]]) ?? []).contains { $0["peer"] as? String == annID } })
        // Dad removes the laptop: Ann, whose key it keeps, goes with it.
        let removed = try dad.json(["circle", "remove", "Laptop", "--yes"])
        #expect(removed["hostedRemovedNames"] as? [String] == ["Ann"], "\(removed)")
        let gone = Set(((try dad.json(["circle"])["removed"] as? [[String: Any]]) ?? []).compactMap { $0["peer"] as? String })
        #expect(gone.contains(annID))
        #expect(!((try dad.json(["circle"])["members"] as? [[String: Any]]) ?? []).contains { $0["peer"] as? String == annID })
    }
}
