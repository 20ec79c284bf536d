import NIOCore
import SweeperCrypto
import SweeperMessages
import SweeperNet
import Synchronization

/// Where the circle's members listen, spread among them (peer protocol
/// 17): so that a device that reaches one member links to every member it
/// can reach, also where mDNS does not cross (another subnet, another
/// house over a VPN or a tailnet), and so that a member heard of through
/// others counts as seen.
///
/// This daemon signs an ``AddressNote`` of the addresses it listens at,
/// sends it to every link whose hello says 17 or later, and signs it
/// anew every ``refreshInterval`` and when its addresses change. A note
/// heard on a link is dropped unless its author is a member (a removed
/// device, or a holder of the circle key that no admission names, is no
/// one) and it is authentic; the newest of each author is kept
/// (``AddressBook``) and goes on once to every other link whose peer is
/// not linked to its author. Its author is then dialled at those
/// addresses until a link comes up, the note expires, or the author
/// leaves the circle.
final class AddressGossip: Sendable {
    /// How often this daemon signs its note anew (what keeps it alive at
    /// the others, and says it is there).
    static let refreshInterval: Duration = .seconds(5 * 60)
    /// How often kept notes are checked for expiry.
    static let expiryInterval: Duration = .seconds(30)

    private let identity: SigningIdentity
    private let links: LinkRegistry
    private let gossip: NoteGossip
    private let clock: any DaemonClock
    /// Whether a peer is a member of the circle now.
    private let isMember: @Sendable (PeerID) -> Bool
    private let book = Mutex(AddressBook())
    private let own = Mutex<AddressNote?>(nil)
    private let node = Mutex<PeerNode?>(nil)
    /// Where this daemon listens, to sign (set when the node is attached).
    private let listening = Mutex<[SocketAddress]>([])

    init(
        identity: SigningIdentity, links: LinkRegistry, gossip: NoteGossip, clock: any DaemonClock,
        isMember: @escaping @Sendable (PeerID) -> Bool
    ) {
        self.identity = identity
        self.links = links
        self.gossip = gossip
        self.clock = clock
        self.isMember = isMember
    }

    /// The node to dial members through, and where it listens; this
    /// daemon's note is signed then.
    func attach(_ node: PeerNode, listening addresses: [SocketAddress]) {
        self.node.withLock { $0 = node }
        listening.withLock { $0 = addresses }
        _ = renewOwn(force: true)
    }

    /// This daemon's note now, signed anew when `force` or when its
    /// addresses changed; nil before the node is attached.
    @discardableResult
    private func renewOwn(force: Bool) -> AddressNote? {
        let addresses = Self.dialable(listening: listening.withLock { $0 }, interfaces: InterfaceAddresses.current())
        return own.withLock { held in
            if let held, !force, held.addresses == addresses { return nil }
            let serial = max(clock.wallMillis, (held?.serial ?? 0) + 1)
            let note = AddressNote(signing: identity, serial: serial, addresses: addresses)
            held = note
            return note
        }
    }

    /// What this daemon listening at `listening` can be dialled at: each
    /// specific address as it is, and for a wildcard one (`::`, `0.0.0.0`)
    /// every address of `interfaces` of its family (both for `::`), with
    /// its port; at most ``AddressNote/addressLimit``, IPv4 first.
    static func dialable(listening: [SocketAddress], interfaces: [String]) -> [ListenAddress] {
        var out: [ListenAddress] = []
        for bound in listening {
            guard let port = bound.port.flatMap(UInt16.init(exactly:)), let ip = bound.ipAddress else { continue }
            let hosts: [String] =
                ip == "::"
                ? interfaces.sorted { !$0.contains(":") && $1.contains(":") }
                : ip == "0.0.0.0"
                    ? interfaces.filter { !$0.contains(":") }
                    : [ip]
            for host in hosts {
                if let a = ListenAddress(host: host, port: port), !out.contains(a) { out.append(a) }
            }
        }
        return Array(out.prefix(AddressNote.addressLimit))
    }

    /// A link's hello came: it is sent this daemon's note and every note
    /// kept but its peer's own.
    func helloReceived(on link: PeerLink) {
        if let note = own.withLock({ $0 }) { link.send(.addresses(note)) }
        for note in book.withLock({ $0.notes }) where note.author != link.peer { link.send(.addresses(note)) }
    }

    /// A note came on `link`: see the type's description. Returns why it
    /// was refused, or nil.
    @discardableResult
    func received(_ note: AddressNote, on link: PeerLink) -> String? {
        guard note.author != identity.peerID else { return nil }
        guard isMember(note.author) else { return "its author is not a member" }
        let now = clock.seconds
        gossip.spread(
            note, as: .addresses(note), from: link,
            take: { note in
                guard self.book.withLock({ $0.take(note, at: now) }) else { return false }
                self.dial(note, seen: AddressBook.isFresh(note, wallMillis: self.clock.wallMillis))
                return true
            }, where: { !$0.handle.reportedLinks.contains(note.author) })
        return nil
    }

    /// Has the node dial `note`'s author where it says it listens.
    private func dial(_ note: AddressNote, seen: Bool) {
        guard let node = node.withLock({ $0 }) else { return }
        let addresses = note.addresses.compactMap { try? SocketAddress(ipAddress: $0.host, port: Int($0.port)) }
        let author = note.author
        Task { await node.gossiped(author, addresses: addresses, seen: seen) }
    }

    /// The circle's members changed: the notes of devices that are no
    /// members now are dropped, and they are dialled no more.
    func membersChanged() { expire() }

    /// Drops the notes that expired or whose author left; their addresses
    /// are dialled no more.
    private func expire() {
        let now = clock.seconds
        let gone = book.withLock { $0.expire(at: now, keeping: isMember) }
        guard !gone.isEmpty, let node = node.withLock({ $0 }) else { return }
        Task { for author in gone { await node.gossipExpired(author) } }
    }

    /// Signs this daemon's note anew every ``refreshInterval`` (and sends
    /// it to every link), and expires kept notes, until cancelled.
    func run() async {
        var sinceRefresh: Duration = .zero
        while !Task.isCancelled {
            try? await clock.sleep(for: Self.expiryInterval)
            if Task.isCancelled { break }
            expire()
            sinceRefresh += Self.expiryInterval
            let due = sinceRefresh >= Self.refreshInterval
            if due { sinceRefresh = .zero }
            if let note = renewOwn(force: due) { gossip.broadcast(.addresses(note)) }
        }
    }
}
