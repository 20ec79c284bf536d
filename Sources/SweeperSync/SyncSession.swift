import SweeperCrypto

/// The sync logic between this replica and one peer, as a state machine
/// driven by messages: no sockets, no clocks. The owner (the daemon, or a
/// simulated network in tests) delivers what arrives to ``receive(_:replica:)``,
/// sends what the session returns, tells every session about ops accepted
/// elsewhere with ``push(_:replica:)``, and calls ``tick(replica:)`` now and
/// then for anti-entropy.
///
/// The protocol is delta-based anti-entropy:
/// 1. On start both sides send a ``SyncMessage/summary(_:wantsReply:)`` of
///    their version vectors.
/// 2. On a summary, a side sends the segments the other lacks, in per-author
///    order (the genesis chain first), and answers with its own summary if
///    asked and the other holds ops it lacks (so that they come back).
/// 3. Afterwards, new ops (local or relayed) are pushed at once, from what
///    the peer is believed to hold up to this replica's head.
/// Loss, duplication and reordering are harmless: duplicates are ignored,
/// early ops wait for their gap, and the next summary repairs any loss.
///
/// Each side may say which games it takes (``SyncMessage/interest(_:)``):
/// the session then sends the peer only those, and drops ops of games
/// outside this side's own interest (given to ``receive(_:replica:taking:)``)
/// before they reach the replica.
public struct SyncSession: Sendable {
    /// What the peer is believed to hold, per game: its last summary,
    /// raised by every op it sent or was sent.
    public private(set) var peerHolds: [GameID: VersionVector] = [:]
    /// Whether a summary from the peer has arrived.
    public private(set) var hasPeerSummary = false
    /// The games the peer takes, from its last interest (every game until it says).
    public private(set) var peerInterest = GameInterest.everything
    /// Whether the peer reads players lists and archive ops (hello version
    /// 7 or later). When not, games that use them are not sent to it at all:
    /// it would close the link on the first such op.
    public var peerReadsRoles = true
    /// Whether the peer reads flood ops (hello version 8 or later). When
    /// not, games that have them are not sent to it.
    public var peerReadsFloods = true

    /// A session that has exchanged nothing yet.
    public init() {}

    /// The first message: this replica's summary, asking for the peer's.
    public mutating func start(replica: Replica) -> [SyncMessage] {
        [.summary(summary(of: replica), wantsReply: true)]
    }

    /// This side's interest, then its summary asking for the peer's: what
    /// a side that does not take every game sends first to a peer that
    /// understands interests, and again whenever its interest changes, so
    /// that the peer sends the games now taken and no others.
    public mutating func start(replica: Replica, interest: GameInterest) -> [SyncMessage] {
        [.interest(interest), .summary(summary(of: replica), wantsReply: true)]
    }

    /// Periodic anti-entropy: the summary again, asking for the peer's.
    public mutating func tick(replica: Replica) -> [SyncMessage] {
        [.summary(summary(of: replica), wantsReply: true)]
    }

    /// The replica's summary as this peer is sent it: without the games it
    /// said it does not take (those it forgot), so that nothing of them
    /// reaches it. A peer that takes only some games (`sync mine`) is told
    /// of every game, so that it can offer them to follow.
    func summary(of replica: Replica) -> [GameID: VersionVector] {
        guard case .allBut(let excluded) = peerInterest, !excluded.isEmpty else { return replica.summary }
        return replica.summary.filter { !excluded.contains($0.key) }
    }

    /// What handling one message produced.
    public struct Step: Sendable {
        /// Messages to send back to this peer.
        public var replies: [SyncMessage] = []
        /// What inserting the peer's ops did; relay `outcome.accepted` to
        /// the other sessions with ``SyncSession/push(_:replica:)``.
        public var outcome = InsertOutcome()
        /// Ops dropped unread because their game is outside this side's interest.
        public var unwanted = 0
    }

    /// Handles one message from the peer; ops of games outside `interest`
    /// (what this side takes) are dropped, counted in ``Step/unwanted``.
    public mutating func receive(_ message: SyncMessage, replica: inout Replica, taking interest: GameInterest = .everything) -> Step {
        var step = Step()
        switch message {
        case .summary(let games, let wantsReply):
            hasPeerSummary = true
            peerHolds = games
            var segments: [OpSegment] = []
            for game in replica.summary.keys.sorted() where sends(game, of: replica) {
                let theirs = games[game] ?? VersionVector()
                segments += replica.segments(for: game, after: theirs)
            }
            if !segments.isEmpty {
                note(sent: segments)
                step.replies.append(.ops(segments))
            }
            // Answer with our summary only when the peer holds ops we lack:
            // otherwise it would have nothing to send us.
            let ours = replica.summary
            if wantsReply, games.contains(where: { interest.contains($0.key) && !(ours[$0.key]?.dominates($0.value) ?? false) }) {
                step.replies.append(.summary(summary(of: replica), wantsReply: false))
            }
        case .ops(let segments):
            for segment in segments {
                if let game = segment.ops.last?.gameID, !interest.contains(game) {
                    step.unwanted += segment.ops.count
                    continue
                }
                let outcome = replica.insert(segment)
                step.outcome.merge(outcome)
                // Segments come from the sender's contiguous chains: it holds everything up to the last op.
                if let last = segment.ops.last {
                    peerHolds[last.gameID, default: VersionVector()].advance(last.author, to: last.seq)
                }
            }
        case .interest(let interest):
            peerInterest = interest
        }
        return step
    }

    /// Decodes and handles one message from the peer. Bytes that do not
    /// decode are counted in the replica (``OpRejection/malformed``) and
    /// rethrown, so that the transport can drop and log the peer.
    public mutating func receive(
        encoded bytes: [UInt8], replica: inout Replica, taking interest: GameInterest = .everything
    ) throws(SyncDecodingError) -> Step {
        let message: SyncMessage
        do {
            message = try SyncMessage(decoding: bytes)
        } catch {
            replica.countMalformed()
            throw error
        }
        return receive(message, replica: &replica, taking: interest)
    }

    /// Messages that bring the peer the given newly accepted ops (and
    /// anything before them it is believed to lack). Ops the peer holds or
    /// sent, and ops of games outside its interest, are skipped.
    public mutating func push(_ accepted: [Op], replica: Replica) -> [SyncMessage] {
        var chains: [GameID: Set<PeerID>] = [:]
        for op in accepted { chains[op.gameID, default: []].insert(op.author) }
        var segments: [OpSegment] = []
        for (game, authors) in chains.sorted(by: { $0.key < $1.key }) where sends(game, of: replica) {
            guard let replicaGame = replica.games[game] else { continue }
            let creator = replicaGame.state?.creator
            let ordered = authors.sorted { a, b in (a == creator) != (b == creator) ? a == creator : a < b }
            for author in ordered {
                var floor = peerHolds[game]?[author] ?? 0
                if !hasPeerSummary {
                    // Unknown peer state: send just the new ops; a summary fills any gap.
                    let earliest = accepted.filter { $0.gameID == game && $0.author == author }.map(\.seq).min() ?? 1
                    floor = max(floor, earliest - 1)
                }
                if let segment = replicaGame.segment(of: author, after: floor) { segments.append(segment) }
            }
        }
        guard !segments.isEmpty else { return [] }
        note(sent: segments)
        return [.ops(segments)]
    }

    /// Whether the peer is sent `game`: it takes it, and can read it.
    private func sends(_ game: GameID, of replica: Replica) -> Bool {
        guard peerInterest.contains(game) else { return false }
        let state = replica.games[game]?.state
        return (peerReadsRoles || state?.usesRoles != true) && (peerReadsFloods || state?.usesFloods != true)
    }

    private mutating func note(sent segments: [OpSegment]) {
        for s in segments {
            if let last = s.ops.last { peerHolds[last.gameID, default: VersionVector()].advance(last.author, to: last.seq) }
        }
    }
}
