/// When discovery tries avahi again after it could not reach it, and what
/// the log says: why, once, at warning with the remedy (``remedy(_:)``);
/// each later try quietly, each further apart (doubling up to
/// ``longest``), so that a machine without avahi-daemon writes a handful
/// of lines a day rather than one every few seconds; and once, when avahi
/// is reached again. Pure: ``AvahiDiscovery/run()`` keeps one.
public struct ReconnectBackoff: Sendable, Equatable {
    /// How long after a failure the first try comes.
    public static let first: Duration = .seconds(3)
    /// The longest wait between two tries.
    public static let longest: Duration = .seconds(300)

    /// What the log says of one step.
    public enum Note: Sendable, Equatable {
        /// Nothing (all is well, or a try like the last).
        case none
        /// Avahi could not be reached for the first time since it was (the
        /// status change says why, at warning, with the remedy).
        case lost
        /// Another try while avahi stays out of reach: debug only.
        case retrying(attempt: Int)
        /// Avahi is reached again after it was lost.
        case back
    }

    /// Tries made since avahi was last reached.
    public private(set) var failures = 0

    public init() {}

    /// How long to wait before the next look at the client.
    public var wait: Duration {
        guard failures > 0 else { return Self.first }
        var d = Self.first
        for _ in 1..<min(failures, 16) where d < Self.longest { d = d * 2 }
        return min(d, Self.longest)
    }

    /// Notes a look at the client: whether it had to be made again
    /// (`failed`); what the log says of it.
    public mutating func look(failed: Bool) -> Note {
        if failed {
            failures += 1
            return failures == 1 ? .lost : .retrying(attempt: failures)
        }
        defer { failures = 0 }
        return failures > 0 ? .back : .none
    }

    /// What the log says when avahi is first out of reach: why, and what
    /// the user can do about it.
    public static func remedy(_ why: String) -> String {
        "mdns: cannot reach avahi-daemon (\(why)): peers are found only by address (sweeper connect) until it runs. "
            + "Install and start it (apt install avahi-daemon; systemctl start avahi-daemon), or set mdns = false. "
            + "Trying again, less and less often (at most every \(Int(longest.components.seconds / 60)) minutes)"
    }
}
