import Foundation
import SweeperControl
import Synchronization

/// Fans events out to subscribed control connections. A slow subscriber
/// loses its oldest events rather than holding the daemon up.
final class EventHub: Sendable {
    private struct Subscriber {
        var game: String?
        var continuation: AsyncStream<ControlEvent>.Continuation
    }

    private let subscribers = Mutex<(next: Int, all: [Int: Subscriber])>((0, [:]))

    /// A new stream of events, of one game or all.
    func subscribe(game: String?) -> AsyncStream<ControlEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ControlEvent.self, bufferingPolicy: .bufferingNewest(4096))
        let key = subscribers.withLock { s in
            s.next += 1
            s.all[s.next] = Subscriber(game: game, continuation: continuation)
            return s.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.all.removeValue(forKey: key) }
        }
        return stream
    }

    /// Sends an event to every interested subscriber.
    func publish(_ event: ControlEvent) {
        let targets = subscribers.withLock { s in
            s.all.values.filter { $0.game == nil || event.game == nil || $0.game == event.game }.map(\.continuation)
        }
        for t in targets { t.yield(event) }
    }

    /// Ends every stream.
    func finish() {
        let all = subscribers.withLock { s in
            defer { s.all = [:] }
            return Array(s.all.values)
        }
        for s in all { s.continuation.finish() }
    }
}
