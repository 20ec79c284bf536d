import FoundationEssentials
import NIOCore
import SweeperControl
import SweeperEventLoop
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Fans events out to the control connections subscribed to them: each
/// event is written to their sockets by the publisher, in the call that
/// publishes it. A slow subscriber loses events rather than holding the
/// daemon up.
final class EventHub: Sendable {
    private struct Subscriber {
        /// The game it follows, or nil for every game.
        var game: String?
        /// The player whose viewer it is (this daemon's own, or one it hosts), by id.
        var player: String?
        var connection: EventConnection
    }

    private let subscribers = Mutex<(next: Int, all: [Int: Subscriber], finished: Bool)>((0, [:], false))

    /// A new subscription of a control connection, of one game or all: the
    /// events are held until ``EventConnection/attach(_:)``, then written
    /// to the connection as they are published.
    /// `player` is whose viewer it is (by id): it gets the events of a
    /// private game only when it plays in it (without one, every event).
    func subscribe(game: String?, player: String? = nil) -> EventConnection {
        let connection = EventConnection()
        let (key, finished) = subscribers.withLock { s in
            s.next += 1
            if !s.finished { s.all[s.next] = Subscriber(game: game, player: player, connection: connection) }
            return (s.next, s.finished)
        }
        if finished {
            connection.end()
        } else {
            connection.onEnd { [weak self] in self?.remove(key) }
        }
        return connection
    }

    private func remove(_ key: Int) {
        _ = subscribers.withLock { $0.all.removeValue(forKey: key) }
    }

    /// Sends an event to every interested subscriber, encoded once; with
    /// `readers` (a private game's players, by id), only to their viewers.
    func publish(_ event: ControlEvent, readers: Set<String>? = nil) {
        let targets = subscribers.withLock { s in
            s.all.values.filter { sub in
                (sub.game == nil || event.game == nil || sub.game == event.game) && (readers.map { r in sub.player.map(r.contains) ?? true } ?? true)
            }.map(\.connection)
        }
        guard !targets.isEmpty, let line = try? event.jsonLine() else { return }
        for target in targets { target.deliver(event, line: line) }
        // What the daemon does next waits: a viewer woken here draws first.
        ProcessorHandOver.handOver()
    }

    /// Ends every subscription; later ones end at once.
    func finish() {
        let all = subscribers.withLock { s in
            defer {
                s.all = [:]
                s.finished = true
            }
            return Array(s.all.values)
        }
        for s in all { s.connection.end() }
    }
}

/// One control connection's subscription to events. Until it is attached
/// to the connection's channel (after the answer to `subscribe` is
/// written), events are held, the newest ``heldLimit``; from then on each
/// is written and flushed to the channel by the publisher, in the order
/// published, so a peer's move reaches a viewer's socket in the call that
/// applied it. While more than ``sendBufferLimit`` bytes wait to be sent,
/// new events are dropped.
public final class EventConnection: Sendable {
    private enum State {
        case holding([ControlEvent])
        /// Writing to the channel; `dropped` events were dropped since the last one written.
        case attached(any Channel, dropped: Int)
        case ended
    }

    /// The most events held before the subscription is attached.
    static let heldLimit = 4096
    /// The most bytes waiting for a slow viewer before events are dropped.
    static let sendBufferLimit = 4 << 20

    private let state = Mutex<State>(.holding([]))
    /// What runs when the subscription ends; nil once it has.
    private let ended = Mutex<[@Sendable () -> Void]?>([])

    fileprivate init() {}

    /// Runs `action` when the subscription ends (at once if it has).
    func onEnd(_ action: @escaping @Sendable () -> Void) {
        let now = ended.withLock { actions -> Bool in
            guard actions != nil else { return true }
            actions?.append(action)
            return false
        }
        if now { action() }
    }

    /// Holds `event`, or writes its encoded `line` to the attached channel.
    fileprivate func deliver(_ event: ControlEvent, line: Data) {
        state.withLock { s in
            switch s {
            case .holding(var held):
                s = .ended  // lets `held` be changed in place
                held.append(event)
                if held.count > Self.heldLimit { held.removeFirst(held.count - Self.heldLimit) }
                s = .holding(held)
            case .attached(let channel, let dropped):
                // Written under the lock, so lines leave in the order published.
                guard channel.isWritable else {
                    s = .attached(channel, dropped: dropped + 1)
                    return
                }
                if dropped > 0, let notice = try? ControlEvent(event: .eventsDropped, dropped: dropped).jsonLine() {
                    channel.write(ByteBuffer(bytes: notice), promise: nil)
                    s = .attached(channel, dropped: 0)
                }
                channel.writeAndFlush(ByteBuffer(bytes: line), promise: nil)
            case .ended:
                break
            }
        }
    }

    /// Writes the events held so far to `channel`, then every later one as
    /// it is published. Call once the answer to `subscribe` is written; on
    /// another thread than the channel's loop, attaching waits for the
    /// loop's next turn, behind that answer.
    public func attach(_ channel: any Channel) {
        guard channel.eventLoop.inEventLoop else {
            channel.eventLoop.execute { self.attach(channel) }
            return
        }
        try? channel.syncOptions?.setOption(
            .writeBufferWaterMark, value: ChannelOptions.Types.WriteBufferWaterMark(low: Self.sendBufferLimit / 2, high: Self.sendBufferLimit))
        state.withLock { s in
            guard case .holding(let held) = s else { return }
            s = .attached(channel, dropped: 0)
            for event in held {
                if let line = try? event.jsonLine() { channel.write(ByteBuffer(bytes: line), promise: nil) }
            }
            channel.flush()
        }
    }

    /// Stops the subscription: nothing more is written or held.
    public func end() {
        state.withLock { $0 = .ended }
        let actions = ended.withLock { actions in
            defer { actions = nil }
            return actions ?? []
        }
        for action in actions { action() }
    }
}
