import SweeperControl
import SweeperTestSupport
import Testing

@testable import SweeperTUI

/// The connection a viewer keeps open for its requests, against a real
/// daemon: one connection from key to key, closed when the daemon goes and
/// kept again when it is back.
@Suite(.serialized) struct RequestConnectionTests {
    @Test func requestsShareOneConnectionThatComesBackWithTheDaemon() async throws {
        let h = try DaemonHarness()
        defer {
            h.stop()
            h.cleanup()
        }
        try h.start()
        let requests = RequestConnection(socket: h.socketPath)
        defer { requests.close() }
        // The first request opens a connection of its own, and the kept one behind it.
        #expect(requests.held == nil)
        #expect(try await requests.call(Commands.Status.self, Empty()).name == "tester")
        #expect(await eventuallyAsync(5) { requests.held != nil }, "no connection was kept")
        // Held here, so a connection opened later cannot take its place in memory and pass for it.
        let first = try #require(requests.held)
        for _ in 0..<5 { _ = try await requests.call(Commands.Status.self, Empty()) }
        #expect(requests.held === first, "the requests did not share the kept connection")
        // The daemon goes: the kept connection closes, and a request says none answers.
        h.stop()
        #expect(await eventuallyAsync(5) { requests.held == nil }, "the kept connection outlived the daemon")
        await #expect(throws: ControlClientError.self) { _ = try await requests.call(Commands.Status.self, Empty()) }
        // Back again: the next request answers, and a new connection is kept.
        try h.start()
        #expect(try await requests.call(Commands.Status.self, Empty()).name == "tester")
        #expect(await eventuallyAsync(5) { requests.held.map { $0 !== first } ?? false }, "no connection was kept again")
    }
}
