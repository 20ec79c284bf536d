import Foundation
import SweeperTestSupport
import Testing

/// `join` on a daemon with mDNS off and no peer linked says at once that
/// it needs the member's address (it still waits, for a `connect` made
/// meanwhile), instead of saying so only when the wait ends.
@Suite(.serialized) struct JoinWithoutMDNSTests {
    @Test func aJoinWithNowhereToLookSaysSoAtOnce() throws {
        let member = try TargetDaemon(name: "ann")
        let newcomer = try TargetDaemon(name: "cat")
        defer {
            newcomer.cleanup()
            member.cleanup()
        }
        try member.start()
        try newcomer.start()
        let code = try #require(try member.result(#"{"id":1,"command":"invite"}"#)["code"] as? String)
        let join = try StartedProcess(
            [TestDaemons.sweeper, "--socket", newcomer.socketPath, "join", code, "--timeout", "20"], environment: newcomer.environment)
        // Said while it waits, long before the wait ends.
        let said = eventually(8) { join.stderrSoFar.contains("--address HOST:PORT") }
        #expect(said, "nothing said of --address while waiting: \(join.stderrSoFar)")
        let port = try member.peerPort()
        #expect(try newcomer.request(#"{"id":2,"command":"connect","address":"127.0.0.1:\#(port)"}"#)["ok"] as? Bool == true)
        let joined = join.wait(seconds: 30)
        #expect(joined.status == 0, "\(joined.stdout)\(joined.stderr)")
    }
}
