import Foundation
import NIOCore
import NIOEmbedded
import SweeperControl
import Testing

@testable import SweeperDaemon

/// The lines written to an embedded channel, decoded.
func lines(_ channel: EmbeddedChannel) throws -> [[String: Any]] {
    var out: [[String: Any]] = []
    while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
        for line in Data(buffer.readableBytesView).split(separator: 0x0A) {
            out.append(try #require(JSONSerialization.jsonObject(with: line) as? [String: Any]))
        }
    }
    return out
}

private func move(_ game: String, _ x: Int) -> ControlEvent {
    ControlEvent(event: .cells, game: game, cells: [CellChange(x: x, y: 0, value: "F")], status: .playing, x: x, y: 0)
}

@Suite struct EventHubTests {
    @Test func aConnectionGetsHeldEventsOnAttachThenEachAsPublishedOfItsGameOnly() throws {
        let hub = EventHub()
        let channel = EmbeddedChannel()
        let subscription = hub.subscribe(game: "g1")
        hub.publish(move("g1", 1))
        hub.publish(move("g2", 2))
        #expect(try lines(channel).isEmpty)
        subscription.attach(channel)
        hub.publish(move("g1", 3))
        hub.publish(ControlEvent(event: .peerChanged))  // events of no game go to every subscriber
        let written = try lines(channel)
        #expect(written.map { $0["x"] as? Int } == [1, 3, nil])
        #expect(written.map { $0["event"] as? String } == ["cells", "cells", "peer-changed"])
        subscription.end()
        hub.publish(move("g1", 4))
        #expect(try lines(channel).isEmpty)
    }

    @Test func aViewerThatDoesNotReadLosesEventsAndHoldsNothingUp() throws {
        let hub = EventHub()
        let channel = EmbeddedChannel()
        let subscription = hub.subscribe(game: nil)
        // Before it is attached, only the newest events are held.
        for x in 0..<(EventConnection.heldLimit + 10) { hub.publish(move("g", x)) }
        subscription.attach(channel)
        let held = try lines(channel)
        #expect(held.count == EventConnection.heldLimit)
        #expect(held.first?["x"] as? Int == 10)
        // While the socket is backed up, new events are dropped.
        channel.isWritable = false
        hub.publish(move("g", -1))
        #expect(try lines(channel).isEmpty)
        hub.publish(move("g", -3))
        #expect(try lines(channel).isEmpty)
        // Caught up: one events-dropped event says how many were lost, then the next event.
        channel.isWritable = true
        hub.publish(move("g", -2))
        let after = try lines(channel)
        #expect(after.first?["event"] as? String == "events-dropped" && after.first?["dropped"] as? Int == 2, "\(after)")
        #expect(after.dropFirst().map { $0["x"] as? Int } == [-2])
        hub.publish(move("g", -4))
        #expect(try lines(channel).map { $0["x"] as? Int } == [-4])
    }

    @Test func afterFinishNewSubscriptionsGetNothing() throws {
        let hub = EventHub()
        let before = hub.subscribe(game: nil)
        let first = EmbeddedChannel()
        before.attach(first)
        hub.finish()
        let late = hub.subscribe(game: nil)
        let second = EmbeddedChannel()
        late.attach(second)
        hub.publish(move("g", 1))
        #expect(try lines(first).isEmpty)
        #expect(try lines(second).isEmpty)
    }
}
