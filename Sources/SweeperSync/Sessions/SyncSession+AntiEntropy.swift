/// Anti-entropy on a quiet link: each tick sends the summary again only
/// when something may need repair.
extension SyncSession {
    /// How many ticks in a row a link may skip its summary: a link where
    /// nothing changes still sends one every this many ticks (30 s at the
    /// daemon's 5 s), which repairs whatever no rule here foresaw.
    public static let quietTickLimit = 6

    /// What anti-entropy remembers of a link: the last summary each side
    /// sent on it, and how many ticks since skipped this side's.
    struct AntiEntropyState: Sendable {
        /// The games and vectors of the last summary sent; `nil` before the first.
        private(set) var lastSent: [GameID: VersionVector]?
        /// The peer's last summary as it said it: what it holds for sure
        /// (``SyncSession/peerHolds`` also counts what was sent to it, which
        /// it may have refused); `nil` before the first.
        private(set) var lastHeard: [GameID: VersionVector]?
        /// Ticks skipped since a summary was last sent.
        var skipped = 0

        /// Notes that a summary of `games` went out.
        mutating func sent(_ games: [GameID: VersionVector]) {
            lastSent = games
            skipped = 0
        }

        /// Notes the peer's summary.
        mutating func heard(_ games: [GameID: VersionVector]) { lastHeard = games }
    }

    /// Periodic anti-entropy: the summary again, asking for the peer's,
    /// unless the link is quiet: this side's summary is the one it last
    /// sent, the peer's last summary said it holds exactly what this side
    /// does of every game both take, and fewer than ``quietTickLimit``
    /// ticks were skipped. Any op either side took since changes its
    /// summary, which it then sends; an op sent that the peer did not keep
    /// (refused, or lost with a link) leaves the peer's word short of this
    /// side's, so every tick sends again until it says it holds it, as
    /// before. An idle circle sends a summary a link every 30 s instead
    /// of every 5.
    public mutating func tick(replica: Replica) -> [SyncMessage] {
        let games = summary(of: replica)
        if antiEntropy.skipped + 1 < Self.quietTickLimit, antiEntropy.lastSent == games, agrees(with: games) {
            antiEntropy.skipped += 1
            return []
        }
        return [summaryMessage(games, wantsReply: true)]
    }

    /// The summary again, asking for the peer's, whatever the link: what a
    /// side sends when it has a reason of its own to hear the peer's (the
    /// peer's hello came, or a game it sent ops of is awake now).
    public mutating func summaryAgain(replica: Replica) -> [SyncMessage] {
        [summaryMessage(of: replica, wantsReply: true)]
    }

    /// Whether the peer's last summary says it holds what `games` (this
    /// side's summary as the peer is sent it) holds: nothing this side
    /// lacks, and every op of every game it takes.
    func agrees(with games: [GameID: VersionVector]) -> Bool {
        guard let heard = antiEntropy.lastHeard else { return false }
        for (game, theirs) in heard where !(games[game]?.dominates(theirs) ?? false) { return false }
        for (game, ours) in games where peerInterest.contains(game) && !(heard[game]?.dominates(ours) ?? false) { return false }
        return true
    }
}
