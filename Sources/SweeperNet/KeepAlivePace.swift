import NIOCore
import Synchronization

/// How often each link of a node keeps itself alive, by how many links the
/// node holds: every ``PeerNodeConfiguration/pingInterval`` while they are
/// few, and less often past ``PeerNodeConfiguration/keepAlivesPerSecond``
/// links, so that an idle node sends a bounded number of keep-alives a
/// second however large its circle. A link's idle timeout grows with its
/// interval (three intervals, as at the shortest).
///
/// Each side paces its own pings and answers the peer's at once, so two
/// sides of different paces agree: the one with the shorter interval pings,
/// and both hear each other within it (``PeerLinkHandler``).
final class KeepAlivePace: Sendable {
    /// The shortest interval, at which a link's handler looks whether a ping is due.
    let tick: TimeAmount
    /// The idle timeout at the shortest interval.
    private let silenceAtTick: TimeAmount
    /// Keep-alive rounds a second over all links.
    private let perSecond: Int
    private let links = Atomic<Int>(0)

    /// The pace `configuration` asks for.
    convenience init(_ configuration: PeerNodeConfiguration) {
        self.init(tick: TimeAmount(configuration.pingInterval), silence: configuration.idleTimeout, perSecond: configuration.keepAlivesPerSecond)
    }

    /// A pace of `tick` and `silence` at most `perSecond` links (a fixed
    /// one with `Int.max`).
    init(tick: TimeAmount, silence: TimeAmount, perSecond: Int) {
        self.tick = tick
        silenceAtTick = silence
        self.perSecond = max(1, perSecond)
    }

    /// Notes how many links the node holds now.
    func setLinks(_ count: Int) { links.store(max(0, count), ordering: .relaxed) }

    /// How often each link pings now.
    var interval: TimeAmount {
        let stretched = Int64(links.load(ordering: .relaxed)) * 1_000_000_000 / Int64(perSecond)
        return .nanoseconds(max(tick.nanoseconds, stretched))
    }

    /// How long a link may stay silent now: as many intervals as the idle
    /// timeout is pings at the shortest.
    var silence: TimeAmount {
        guard tick.nanoseconds > 0 else { return silenceAtTick }
        let scaled = Double(silenceAtTick.nanoseconds) * Double(interval.nanoseconds) / Double(tick.nanoseconds)
        return .nanoseconds(max(silenceAtTick.nanoseconds, Int64(min(scaled, Double(Int64.max / 2)))))
    }
}
