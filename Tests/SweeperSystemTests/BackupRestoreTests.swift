import Foundation
import SweeperTestSupport
import Testing

/// A device backed up while its daemon runs, wiped, and restored: the same
/// device (peer id), the same games and scores, and its circle takes it back.
@Suite(.serialized) struct BackupRestoreTests {
    @Test func aBackupMadeWhilePlayingRestoresTheSameDeviceAndItsCircleTakesItBack() throws {
        let (ann, bob) = try twoDaemonsInOneCircle()
        defer { ann.cleanup(); bob.cleanup() }
        let game = try #require(try ann.json(["new", "--preset", "beginner", "--seed", "31"])["game"] as? String)
        #expect(eventually(20) { (try? bob.json(["show", game]))?["game"] as? String == game }, "bob never got the game")
        for (h, n) in [(ann, 0), (ann, 1), (bob, 2)] {
            let cell = try #require(firstCovered(try h.json(["show", game])["board"] as? [String] ?? []))
            #expect(try h.cli(["flag", game, "\(cell.x)", "\(cell.y)"]).status == 0, "move \(n)")
        }
        #expect(eventually(20) { (try? ann.json(["show", game]))?["digest"] as? String == (try? bob.json(["show", game]))?["digest"] as? String })
        let me = try #require(try ann.json(["status"])["peer"] as? String)
        let digest = try #require(try ann.json(["show", game])["digest"] as? String)
        let scores = try ann.cli(["scores"]).stdout
        // Backed up while the daemon runs, to a file of the user's own choosing.
        let file = ann.root + "/ann.backup"
        let backedUp = try ann.json(["backup", file])
        #expect(backedUp["peer"] as? String == me && backedUp["gameCount"] as? Int == 1 && (backedUp["bytes"] as? Int ?? 0) > 4096, "\(backedUp)")
        var st = stat()
        #expect(stat(file, &st) == 0 && st.st_mode & 0o777 == 0o600, "the backup is not private")
        // Never over a file.
        let again = try ann.cli(["backup", file])
        #expect(again.status == 1 && again.stderr.contains("exists already"), "\(again.stderr)")
        // Never into a file someone else made first under the name it writes to (it holds the secret key).
        let pid = try #require(try ann.json(["status"])["pid"] as? Int)
        let planted = ann.root + "/planted.backup"
        #expect(FileManager.default.createFile(atPath: planted + ".partial-\(pid)", contents: nil))
        let refused = try ann.cli(["backup", planted])
        #expect(refused.status == 1 && refused.stderr.contains("cannot make"), "\(refused.stderr)")
        #expect(FileManager.default.contents(atPath: planted + ".partial-\(pid)")?.isEmpty == true && !FileManager.default.fileExists(atPath: planted))
        // A live database (a log beside it) is no backup: refused, nothing changed.
        let live = ann.root + "/live.sqlite"
        try FileManager.default.copyItem(atPath: file, toPath: live)
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: live + "-wal"))
        let fromLive = try ann.cli(["restore", live, "--state-dir", ann.root + "/elsewhere"])
        #expect(fromLive.status == 1 && fromLive.stderr.contains("write-ahead log"), "\(fromLive.stderr)")
        // Never under a running daemon.
        let busy = try ann.cli(["restore", file, "--state-dir", ann.stateDirectory])
        #expect(busy.status == 1 && busy.stderr.contains("stop it first"), "\(busy.stderr)")
        // The machine is lost: its state goes; the backup brings the device back.
        ann.stop()
        try FileManager.default.removeItem(atPath: ann.stateDirectory)
        let restored = try ann.cli(["restore", file, "--state-dir", ann.stateDirectory])
        #expect(
            restored.status == 0 && restored.stdout.contains("Restored device") && restored.stdout.contains("run it on this machine only"),
            "\(restored.stdout)\(restored.stderr)")
        // A device there already is not replaced unless asked, and then kept aside.
        let over = try ann.cli(["restore", file, "--state-dir", ann.stateDirectory])
        #expect(over.status == 1 && over.stderr.contains("--replace"), "\(over.stderr)")
        let replaced = try ann.cli(["--json", "restore", file, "--state-dir", ann.stateDirectory, "--replace"])
        let report = try JSONSerialization.jsonObject(with: Data(replaced.stdout.utf8)) as? [String: Any]
        let aside = try #require(report?["movedAside"] as? String, "\(replaced.stdout)\(replaced.stderr)")
        #expect(FileManager.default.fileExists(atPath: aside) && report?["peer"] as? String == me)
        // Again at once: the first one kept aside is never overwritten.
        let again2 = try ann.cli(["--json", "restore", file, "--state-dir", ann.stateDirectory, "--replace"])
        let second = (try JSONSerialization.jsonObject(with: Data(again2.stdout.utf8)) as? [String: Any])?["movedAside"] as? String
        #expect(second != nil && second != aside && FileManager.default.fileExists(atPath: aside), "\(again2.stdout)\(again2.stderr)")
        try ann.start(name: "ann")
        #expect(try ann.json(["status"])["peer"] as? String == me, "the restored daemon is another device")
        #expect(try ann.json(["show", game])["digest"] as? String == digest)
        #expect(try ann.cli(["scores"]).stdout == scores)
        // Its circle takes it back: linked to bob again, and bob's next move reaches it.
        #expect(
            eventually(30) {
                ((try? bob.json(["peers"]))?["peers"] as? [[String: Any]] ?? []).contains {
                    $0["peer"] as? String == me && $0["state"] as? String == "connected"
                }
            }, "bob never linked to the restored device: \((try? bob.cli(["peers"]).stdout) ?? "")")
        let cell = try #require(firstCovered(try bob.json(["show", game])["board"] as? [String] ?? []))
        #expect(try bob.cli(["flag", game, "\(cell.x)", "\(cell.y)"]).status == 0)
        #expect(
            eventually(20) { (try? ann.json(["show", game]))?["digest"] as? String == (try? bob.json(["show", game]))?["digest"] as? String },
            "the restored device did not take bob's move")
    }
}
