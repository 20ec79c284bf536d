import Foundation
import NIOCore
import NIOEmbedded
import NIOPosix
import SweeperControl
import SweeperMessages
import SweeperNet
import Testing

@testable import SweeperDaemon

/// Docs/control-protocol.md against the daemon: every example in it is one
/// session, run here against the daemon's own router. `→` lines are sent
/// in order and each answer must match the `←` line after it; a `⇢` line
/// subscribes a second connection first, whose answer and events must match
/// the `⇠` lines. `"…"` matches any value; an object matches only with
/// exactly its members, unless it has a `"…": "…"` member.
@Suite struct ControlProtocolDocTests {
    static let document = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Docs/control-protocol.md")

    /// The example lines of the document, by marker.
    static func examples() throws -> [(marker: String, line: String)] {
        let text = try String(contentsOf: document, encoding: .utf8)
        return text.split(separator: "\n").compactMap { raw in
            let line = raw.trimmingCharacters(in: .whitespaces)
            for marker in ["→", "←", "⇢", "⇠"] where line.hasPrefix(marker + " ") {
                return (marker, String(line.dropFirst(marker.count + 1)))
            }
            return nil
        }
    }

    /// Whether `actual` is what `expected` describes.
    static func matches(_ expected: Any, _ actual: Any) -> Bool {
        if let e = expected as? String, e == "…" { return true }
        switch (expected, actual) {
        case let (e as [String: Any], a as [String: Any]):
            for (key, value) in e where key != "…" {
                guard let other = a[key], matches(value, other) else { return false }
            }
            return e["…"] != nil || Set(a.keys) == Set(e.keys)
        case let (e as [Any], a as [Any]):
            return e.count == a.count && zip(e, a).allSatisfy { matches($0, $1) }
        case let (e as String, a as String):
            return e == a
        case let (e as NSNumber, a as NSNumber):
            return e == a
        case (is NSNull, is NSNull):
            return true
        default:
            return false
        }
    }

    static func json(_ line: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(line.utf8), options: [.fragmentsAllowed])
    }

    @Test func everyExampleInTheDocumentIsWhatTheDaemonDoes() async throws {
        let examples = try Self.examples()
        #expect(examples.count >= 10, "the document lost its examples")
        let f = try await DaemonFixture()
        let loop = f.loop

        // The subscriber connects first, so it sees every event of the session.
        var expectedEvents = examples.filter { $0.marker == "⇠" }.map(\.line)
        let subscribeLine = try #require(examples.first { $0.marker == "⇢" }?.line)
        guard case .subscribe(let answer, let subscription) = await f.router.reply(to: Data(subscribeLine.utf8)) else {
            Issue.record("\(subscribeLine) did not subscribe")
            return
        }
        let subscribed = String(decoding: answer, as: UTF8.self).trimmingCharacters(in: .newlines)
        let first = expectedEvents.removeFirst()
        #expect(Self.matches(try Self.json(first), try Self.json(subscribed)), "\(subscribed)\ndoes not match\n\(first)")
        let viewer = try await loop.submit {
            let channel = EmbeddedChannel()
            subscription.attach(channel)
            return NIOLoopBound(channel, eventLoop: loop)
        }.get()

        // The session, request by request.
        let session = examples.filter { $0.marker == "→" || $0.marker == "←" }
        var i = 0
        while i < session.count {
            let request = session[i]
            #expect(request.marker == "→", "an answer without its request: \(request.line)")
            guard i + 1 < session.count, session[i + 1].marker == "←" else {
                Issue.record("no answer documented for \(request.line)")
                break
            }
            guard case .answer(let data) = await f.router.reply(to: Data(request.line.utf8)) else {
                Issue.record("\(request.line) subscribed")
                break
            }
            let actual = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
            let expected = session[i + 1].line
            #expect(Self.matches(try Self.json(expected), try Self.json(actual)), "\(request.line)\nanswered\n\(actual)\nnot\n\(expected)")
            i += 2
        }

        // The events the subscriber received, in order.
        let received = try await loop.submit {
            var lines: [String] = []
            while let buffer = try viewer.value.readOutbound(as: ByteBuffer.self) {
                lines += String(decoding: buffer.readableBytesView, as: UTF8.self).split(separator: "\n").map(String.init)
            }
            return lines
        }.get()
        #expect(received.count == expectedEvents.count, "received \(received)")
        for (expected, actual) in zip(expectedEvents, received) {
            #expect(Self.matches(try Self.json(expected), try Self.json(actual)), "\(actual)\ndoes not match\n\(expected)")
        }
        subscription.end()
        await f.cleanup()
    }

    @Test func aPeerRunningAnOlderSweeperIsSaidWithWhatItMisses() {
        // The daemon words it, from the peer protocol's own versions; clients show what it says.
        let presence = PeerCapabilities.presenceVersion, play = PeerCapabilities.playVersion
        #expect(ReplyViews.versionNote(of: "gran", speaking: presence - 1)?.contains("gran runs an older Sweeper (peer protocol \(presence - 1))") == true)
        #expect(ReplyViews.versionNote(of: "gran", speaking: presence - 1)?.contains("played time do not reach it") == true)
        #expect(ReplyViews.versionNote(of: "aunt", speaking: presence)?.contains("its played time is not added") == true)
        #expect(ReplyViews.versionNote(of: "mum", speaking: play) == nil && ReplyViews.versionNote(of: "", speaking: 1)?.hasPrefix("this peer") == true)
    }

    @Test func theMatcherRefusesWhatDiffers() throws {
        #expect(Self.matches(try Self.json(#"{"a": 1, "b": "…"}"#), try Self.json(#"{"a": 1, "b": [2]}"#)))
        #expect(!Self.matches(try Self.json(#"{"a": 1}"#), try Self.json(#"{"a": 1, "b": 2}"#)))
        #expect(Self.matches(try Self.json(#"{"a": 1, "…": "…"}"#), try Self.json(#"{"a": 1, "b": 2}"#)))
        #expect(!Self.matches(try Self.json(#"{"a": null}"#), try Self.json(#"{}"#)))
        #expect(!Self.matches(try Self.json(#"[1, 2]"#), try Self.json(#"[1]"#)))
        #expect(!Self.matches(try Self.json(#"{"a": "x"}"#), try Self.json(#"{"a": "y"}"#)))
    }
}
