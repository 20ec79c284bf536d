import Foundation
import SweeperTestSupport
import Testing

/// The control socket under abuse: another user, malformed JSON,
/// huge lines, unknown commands, floods of requests and of connections.
/// Each gets an error answer or a clean close, and the daemon goes on
/// serving everybody else.
@Suite(.serialized) struct ControlAbuseTests {
    /// Parses an answer line.
    private func json(_ line: String?) -> [String: Any]? {
        guard let line else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }

    private func code(_ answer: [String: Any]?) -> String? {
        (answer?["error"] as? [String: Any])?["code"] as? String
    }

    /// A socket another user serves where this user's is looked for (a
    /// shared `/tmp`, say) gets nothing from the client: it connects, sees
    /// the server's user, and closes without sending a request.
    @Test(.enabled(if: canActAsAnotherUser, "needs root and setpriv to act as another user"))
    func theClientSendsNothingToAnotherUsersSocket() throws {
        let dir = NSTemporaryDirectory() + "sweeper-foreign-\(UUID().uuidString)"
        #expect(mkdir(dir, 0o777) == 0 && chmod(dir, 0o777) == 0)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let socket = dir + "/control.sock", report = dir + "/report"
        // A server running as nobody: it accepts one connection and writes
        // down how many bytes came on it before the client closed (or 3 s passed).
        let server = """
            import os, socket, sys
            s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); s.listen(1)
            c, _ = s.accept(); c.settimeout(3); n = 0
            try:
                while True:
                    b = c.recv(4096)
                    if not b: break
                    n += len(b)
            except socket.timeout: pass
            open(sys.argv[2], "w").write(f"accepted {n}")
            """
        let pid = try spawnDetached([
            "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", server, socket, report,
        ])
        defer { _ = stopProcess(pid) }
        #expect(eventually(10) { FileManager.default.fileExists(atPath: socket) }, "the other user's server never listened")
        let call = try runProcess([DaemonHarness.sweeper, "--socket", socket, "status"])
        #expect(call.status == 1 && call.stderr.contains("served by a process of user 65534"), "\(call)")
        // The connection was made, and not one byte was sent on it.
        #expect(eventually(10) { (try? String(contentsOfFile: report, encoding: .utf8)) != nil }, "the server never saw the client")
        #expect(try String(contentsOfFile: report, encoding: .utf8) == "accepted 0")
    }

    @Test(.enabled(if: canActAsAnotherUser, "needs root and setpriv to act as another user"))
    func anotherUserCannotConnect() throws {
        let d = try TargetDaemon(name: "ann")
        defer { d.cleanup() }
        try d.start()
        let asNobody = [
            "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", DaemonHarness.sweeper,
            "--socket", d.socketPath, "--json", "status",
        ]

        // The directory (0700) and socket (0600) keep other users out.
        var st = stat()
        #expect(stat((d.socketPath as NSString).deletingLastPathComponent, &st) == 0 && st.st_mode & 0o777 == 0o700)
        #expect(stat(d.socketPath, &st) == 0 && st.st_mode & 0o777 == 0o600)
        let walledOff = try runProcess(asNobody, environment: d.environment)
        #expect(walledOff.status != 0 && !walledOff.stdout.contains("peerID"), "\(walledOff)")

        // With the file modes opened up, our client (as nobody) sees the daemon is
        // another user's and sends nothing; a raw caller that asks anyway is refused
        // by the daemon's own uid check, every time, logged once.
        chmod((d.socketPath as NSString).deletingLastPathComponent, 0o755)
        chmod(d.socketPath, 0o666)
        let offset = d.log().utf8.count
        let ourClient = try runProcess(asNobody, environment: d.environment)
        #expect(ourClient.status == 1 && ourClient.stderr.contains("served by a process of user 0"), "\(ourClient)")
        let rawCaller = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b'{"id":1,"command":"status"}\\n')
            print(s.makefile().readline().strip())
            """
        for _ in 0..<3 {
            let refused = try runProcess(
                ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", rawCaller, d.socketPath])
            #expect(refused.status == 0 && !refused.stdout.contains("peerID"), "\(refused)")
            #expect(refused.stdout.contains("permission-denied") && refused.stdout.contains("serves only its own user"), "\(refused)")
        }
        #expect(eventually(10) { !d.logLines(since: offset, containing: "from another user").isEmpty })
        #expect(d.logLines(since: offset, containing: "refused a control connection from another user", "uid=65534").count == 1)
        // Its own user is served.
        #expect(try d.request(#"{"id":1,"command":"status"}"#)["ok"] as? Bool == true)
    }

    @Test func badLinesGetErrorAnswersAndTheConnectionGoesOn() throws {
        let d = try TargetDaemon(name: "ann")
        defer { d.cleanup() }
        try d.start()
        let game = try d.newGame()
        let c = try ControlLineClient(path: d.socketPath)

        let cases: [(line: [UInt8], code: String, id: Int?)] = [
            (Array("{not json".utf8), "malformed-request", nil),
            (Array("[1,2,3]".utf8), "malformed-request", nil),
            (Array("\"status\"".utf8), "malformed-request", nil),
            (Array(#"{"id":5}"#.utf8), "malformed-request", 5),
            (Array(#"{"id":6,"command":"launch-missiles"}"#.utf8), "unknown-command", 6),
            (Array(#"{"id":7,"command":"reveal","game":"\#(game)","x":"a","y":1}"#.utf8), "bad-arguments", 7),
            (Array(#"{"id":8,"command":"reveal","game":"\#(game)","x":99999999999,"y":-5}"#.utf8), "outside-board", 8),
            (Array(#"{"id":9,"command":"new","width":100000,"height":100000,"mines":1}"#.utf8), "bad-parameters", 9),
            (Array(#"{"id":10,"command":"show","game":"zz"}"#.utf8), "unknown-game", 10),
            ([0xFF, 0xFE, 0x00, 0x7B, 0x0D], "malformed-request", nil),  // not UTF-8, a NUL
            (Array(repeating: UInt8(ascii: "["), count: 60_000), "malformed-request", nil),  // deep nesting
            (
                Array(
                    ("{\"id\":11,\"command\":\"status\",\"x\":" + String(repeating: "{\"a\":", count: 10_000) + "1"
                        + String(repeating: "}", count: 10_000) + "}").utf8), "", nil
            ),  // deep but valid: some answer
            (Array(repeating: UInt8(ascii: "a"), count: 3 << 20), "line-too-long", nil),  // 3 MiB
            (Array((#"{"id":12,"command":"status","pad":""# + String(repeating: "x", count: 70_000) + "\"}").utf8), "line-too-long", nil),
        ]
        for (i, item) in cases.enumerated() {
            c.send(item.line + [0x0A])
            let answer = json(c.readLine())
            let what = "case \(i): \(String(decoding: item.line.prefix(60), as: UTF8.self))"
            if item.code.isEmpty {
                #expect(answer?["ok"] is Bool, "\(what): \(String(describing: answer))")
                continue
            } else {
                #expect(answer?["ok"] as? Bool == false && code(answer) == item.code, "\(what): \(String(describing: answer))")
            }
            if let id = item.id { #expect(answer?["id"] as? Int == id, "\(what)") } else { #expect(answer?["id"] is NSNull, "\(what)") }
        }
        // The same connection still serves, and so does the daemon.
        c.send(#"{"id":"last","command":"status"}"#)
        let last = json(c.readLine())
        #expect(last?["ok"] as? Bool == true && last?["id"] as? String == "last")
        #expect(try d.flagFresh(game: game))

        // A huge line that never ends, then a hang-up: nothing is kept, nothing breaks.
        do {
            let h = try ControlLineClient(path: d.socketPath)
            h.send(Array(repeating: UInt8(ascii: "{"), count: 8 << 20))
            #expect(code(json(h.readLine())) == "line-too-long")
        }
        #expect(d.isRunning)
        #expect(try d.request(#"{"id":1,"command":"status"}"#)["ok"] as? Bool == true)
    }

    @Test func floodsOfRequestsAndConnectionsAreAnsweredAndLeaveTheDaemonServing() throws {
        let d = try TargetDaemon(name: "ann")
        defer { d.cleanup() }
        try d.start()
        let game = try d.newGame()
        let descriptors = d.openDescriptors()

        // 5000 requests pipelined on one connection, good and bad mixed,
        // written from another thread while this one reads: one answer each, in order.
        let count = 5000
        var c: ControlLineClient? = try ControlLineClient(path: d.socketPath)
        var batch: [UInt8] = []
        for i in 0..<count {
            let line =
                switch i % 4 {
                case 0: #"{"id":\#(i),"command":"status"}"#
                case 1: #"{"id":\#(i),"command":"show","game":"\#(game)"}"#
                case 2: #"{"id":\#(i),"command":"nope"}"#
                default: #"{"id":\#(i),"command":"hint","game":"\#(game)"}"#
                }
            batch += Array((line + "\n").utf8)
        }
        let writer = Thread { [c, batch] in c?.send(batch) }
        writer.start()
        var inOrder = 0
        var errors = 0
        for i in 0..<count {
            guard let answer = json(c?.readLine()) else { break }
            if answer["id"] as? Int == i { inOrder += 1 }
            if code(answer) == "unknown-command" { errors += 1 }
        }
        #expect(inOrder == count)
        #expect(errors == count / 4)
        _ = eventually(30) { writer.isFinished }
        c = nil

        // A client that pipelines thousands of requests and never reads its answers.
        do {
            let greedy = try ControlLineClient(path: d.socketPath, sendTimeout: 5)
            let line = Array(#"{"id":1,"command":"show","game":"\#(game)"}"#.utf8) + [0x0A]
            let thread = Thread {
                var lines: [UInt8] = []
                for _ in 0..<20_000 { lines += line }
                greedy.send(lines)
            }
            thread.start()
            // Meanwhile everybody else is served.
            #expect(eventually(10) { (try? d.request(#"{"id":1,"command":"status"}"#))?["ok"] as? Bool == true })
            #expect(try d.flagFresh(game: game))
            _ = eventually(10) { thread.isFinished }
        }

        // More connections at once than the daemon takes: every one gets an
        // answer, either served or told there are too many.
        do {
            let crowd = try (0..<300).map { _ in try ControlLineClient(path: d.socketPath) }
            var served = 0
            var turnedAway = 0
            for client in crowd {
                client.send(#"{"id":1,"command":"status"}"#)
                let answer = json(client.readLine())
                if answer?["ok"] as? Bool == true { served += 1 }
                if code(answer) == "too-many-connections" { turnedAway += 1 }
            }
            #expect(served + turnedAway == 300, "served \(served), turned away \(turnedAway)")
            #expect(turnedAway >= 1 && served <= 256 && served >= 200, "served \(served), turned away \(turnedAway)")
        }
        #expect(d.logLines(since: 0, containing: "too many open").count == 1)

        // Once they are gone, the daemon serves as before and holds no more descriptors than it did.
        #expect(eventually(30) { (try? d.request(#"{"id":1,"command":"status"}"#))?["ok"] as? Bool == true })
        #expect(try d.flagFresh(game: game))
        #expect(d.isRunning)
        #expect(eventually(30) { d.openDescriptors() <= descriptors + 2 }, "descriptors: \(descriptors) before, \(d.openDescriptors()) after")
    }
}
