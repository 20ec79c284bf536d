import Foundation
import SweeperTestSupport
import Testing

/// `join` on a daemon with mDNS off that dials no peer says at once that
/// it needs the member's address, instead of waiting to find nobody.
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
        let started = Date()
        let answer = try newcomer.request(#"{"id":2,"command":"join","code":"\#(code)","waitSeconds":30}"#)
        let took = Date().timeIntervalSince(started)
        let error = answer["error"] as? [String: Any]
        #expect(answer["ok"] as? Bool != true && error?["code"] as? String == "no-member", "\(answer)")
        #expect((error?["message"] as? String)?.contains("--address") == true, "\(answer)")
        #expect(took < 10, "it waited \(took) s to say so")
        // With the address it joins.
        let port = try member.peerPort()
        let joined = try newcomer.request(#"{"id":3,"command":"join","code":"\#(code)","address":"127.0.0.1:\#(port)"}"#)
        #expect(joined["ok"] as? Bool == true, "\(joined)")
    }
}
