import Foundation
import SweeperTestSupport
import Testing

/// A game another member starts the very moment this device switches to
/// `sync mine` is never lost between the two lists: it is either taken
/// (in `games`) or offered (in `games --available`), and `follow` finds it
/// by its short id.
@Suite(.serialized) struct SyncMineRaceTests {
    @Test func aGameStartedAsSyncMineIsSwitchedOnIsListedAndFollowedByItsShortID() throws {
        let (ann, bob) = try twoDaemonsInOneCircle()
        defer { ann.cleanup(); bob.cleanup() }
        func ids(_ answer: [String: Any]?, _ key: String) -> Set<String> {
            Set((answer?[key] as? [[String: Any]] ?? []).compactMap { $0["game"] as? String })
        }
        func listed(_ game: String) -> (held: Bool, offered: Bool) {
            (ids(try? ann.json(["games"]), "games").contains(game), ids(try? ann.json(["games", "--available"]), "available").contains(game))
        }
        var taken = 0, offered = 0
        for round in 0..<8 {
            #expect(try ann.cli(["sync", "all"]).status == 0)
            // Bob starts a game while ann switches: two clients at once, on two threads.
            let started = DispatchSemaphore(value: 0)
            let start = OtherThread(bob)
            Thread.detachNewThread {
                start.game = (try? start.daemon.json(["new", "--preset", "beginner", "--seed", "\(100 + round)"]))?["game"] as? String
                started.signal()
            }
            // Each round the switch comes a little later: before, during and after the game's first push.
            Thread.sleep(forTimeInterval: Double(round) * 0.025)
            let switched = try ann.cli(["sync", "mine"])
            started.wait()
            #expect(switched.status == 0, "\(switched.stderr)")
            let id = try #require(start.game, "bob could not start a game")
            // Listed on one side or the other within a few of the peers' summaries.
            #expect(
                eventually(20) {
                    let l = listed(id); return l.held || l.offered
                }, "round \(round): \(id) is listed nowhere on ann's device")
            let listing = listed(id)
            if listing.held { taken += 1 } else { offered += 1 }
            // Following it by its short id brings it (or keeps it) here.
            let followed = try ann.cli(["follow", String(id.prefix(8))])
            #expect(followed.status == 0, "round \(round): follow \(id.prefix(8)): \(followed.stderr)")
            #expect(eventually(20) { listed(id).held }, "round \(round): \(id) did not come after follow")
        }
        print("sync mine race: \(taken) games taken before the switch, \(offered) offered after it")
    }
}

/// What the other thread uses and gives back; read only after it signals.
private final class OtherThread: @unchecked Sendable {
    let daemon: DaemonHarness
    var game: String?
    init(_ daemon: DaemonHarness) { self.daemon = daemon }
}
