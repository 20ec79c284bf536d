import SweeperControl
import Synchronization

/// The control connection a viewer keeps open for its requests (moves,
/// boards, lists): a key press then pays no connect and no credential
/// check, and the daemon takes one viewer's requests in the order they
/// were written. While it is down (the daemon restarting), a request opens
/// a connection of its own, as `sweeper reveal` does, and the kept one is
/// opened again behind it.
final class RequestConnection: Sendable {
    private struct State {
        var client: ControlClient?
        var keeper: Task<Void, Never>?
        var closed = false
    }

    private let socket: String
    private let state = Mutex(State())

    /// The connection to the daemon at `socket`; nothing opens until the
    /// first request or ``keepOpen()``.
    init(socket: String) {
        self.socket = socket
    }

    /// Sends a command and waits for its answer, on the kept connection when
    /// it is up. A request written on it is never sent again: when the
    /// connection closes before the answer, the call fails as any call does.
    func call<C: ControlCommand>(_ command: C.Type, _ arguments: C.Arguments) async throws -> C.Result
    where C.Arguments: Sendable, C.Result: Sendable {
        if let client = state.withLock({ $0.client }), !client.isClosed {
            return try await client.call(command, arguments)
        }
        keepOpen()
        return try await ControlClient.withConnection(socketPath: socket) { try await $0.call(command, arguments) }
    }

    /// The kept connection while it is open: the same one from request to
    /// request, another after it closed and opened again.
    var held: ControlClient? {
        state.withLock { s in s.client.flatMap { $0.isClosed ? nil : $0 } }
    }

    /// Opens the kept connection, unless it is open, opening or closed for good.
    func keepOpen() {
        state.withLock { s in
            guard !s.closed, s.keeper == nil else { return }
            s.keeper = Task { [self] in await keep() }
        }
    }

    /// Closes the kept connection for good.
    func close() {
        let keeper = state.withLock { s in
            s.closed = true
            return s.keeper
        }
        keeper?.cancel()
    }

    /// Holds one connection open until it closes or ``close()``.
    private func keep() async {
        _ = try? await ControlClient.withConnection(socketPath: socket, waitingForStart: .zero) { client in
            self.state.withLock { $0.client = client }
            await client.waitUntilClosed()
        }
        state.withLock { s in
            s.client = nil
            s.keeper = nil
        }
    }
}

extension RequestConnection {
    private static let kept = Mutex<[String: RequestConnection]>([:])

    /// The kept connection of this process to the daemon at `socket` (a
    /// new one when the last was closed for good).
    static func kept(to socket: String) -> RequestConnection {
        kept.withLock { all in
            if let connection = all[socket], !connection.state.withLock({ $0.closed }) { return connection }
            let connection = RequestConnection(socket: socket)
            all[socket] = connection
            return connection
        }
    }
}
