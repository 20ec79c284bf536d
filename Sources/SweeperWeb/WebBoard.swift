import FoundationEssentials
import Synchronization

/// The web board as the rest of the daemon sees it: where it is served
/// (once bound), who may use it, and the login addresses `sweeper web`
/// hands out.
public final class WebBoard: Sendable {
    /// Whether the board is served, and where.
    public enum State: Sendable, Equatable {
        /// Not bound yet.
        case starting
        /// Served on this loopback port.
        case serving(port: Int)
        /// Not served, and why.
        case unavailable(String)
    }

    /// Who may use the board.
    public let access: WebAccess
    private let state = Mutex(State.starting)

    /// Creates the board's shared state.
    public init(access: WebAccess = WebAccess()) {
        self.access = access
    }

    /// Whether and where the board is served.
    public var current: State { state.withLock { $0 } }

    func set(_ new: State) { state.withLock { $0 = new } }

    /// The board's address without a secret, once it is served.
    public var address: String? {
        guard case let .serving(port) = current else { return nil }
        return "http://127.0.0.1:\(port)/"
    }

    /// A login address for one browser: the board's address with a new
    /// one-time secret, opening `game` (an id) when given. Nil while the
    /// board is not served.
    public func login(game: String? = nil) -> (url: String, address: String, expiresMillis: Int64)? {
        guard let address else { return nil }
        let (secret, expires) = access.issueLogin(game: game)
        return (address + "?key=" + secret, address, expires)
    }
}
