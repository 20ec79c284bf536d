import SweeperConventions
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
/// Between peers that both speak peer protocol 8, a side pushes its own new
/// ops as ``SyncMessage/live(_:)`` (see ``liveAuthor``): compact, without a
/// signature, applied at once on the strength of the link's handshake (the
/// link's peer is their author). Their author signs the chain head on the
/// link now and then: in the push itself every ``headInterval`` ops and with
/// the op that ends a game, and in a ``SyncMessage/heads(_:)`` message when
/// the owner calls ``signHeads(replica:)`` (the daemon does when its player
/// pauses). Until a signature covers them, such ops are applied, shown and
/// kept, but never relayed or sent in a catch-up: only signed runs travel
/// past the link they came on. A side that holds ops no signature covers
/// asks for one with ``SyncMessage/unsigned(_:)`` (``askForSignatures(replica:)``),
/// which any peer that holds one answers.
///
/// Each side may say which games it takes (``SyncMessage/interest(_:)``):
/// the session then sends the peer only those, and drops ops of games
/// outside this side's own interest (given to ``receive(_:replica:taking:)``)
/// before they reach the replica.
public struct SyncSession: Sendable {
    /// What the peer is believed to hold, per game: its last summary,
    /// raised by every op it sent or was sent.
    public internal(set) var peerHolds: [GameID: VersionVector] = [:]
    /// Whether a summary from the peer has arrived.
    public private(set) var hasPeerSummary = false
    /// The parts of a summary the peer is sending, until the summary that ends them.
    private var summaryParts: [GameID: VersionVector] = [:]
    /// The most games the parts of one summary may bring.
    var summaryPartsLimit = SyncMessage.partedGameLimit
    /// The games the peer takes, from its last interest (every game until it says).
    public private(set) var peerInterest = GameInterest.everything
    /// What the peer reads of the op format (``GameFeatures``), from its
    /// hello: a game that uses anything else is not sent to it at all, nor
    /// described (it would close the link on the first op it cannot read).
    public var peerReads = GameFeatures.all
    /// Whether the peer answers ``SyncMessage/describe(_:)`` (hello version
    /// 11 or later): it is asked to describe the games of its summary that
    /// this side does not hold (``described``).
    public var peerDescribes = true
    /// What the peer told of games it holds and this side did not when it
    /// asked (``SyncMessage/descriptions(_:)``), by game.
    public private(set) var described: [GameID: GameOverview] = [:]
    /// The games this side asked the peer to describe.
    private var askedToDescribe: Set<GameID> = []
    /// The most games a session asks one peer to describe.
    public static let describedLimit = 10_000
    /// The most games a peer's summary names that this side does not hold
    /// which the session keeps: what a family's devices that take only
    /// their own games (`sync mine`) ever leave apart, many times over,
    /// while a summary of a million made-up games costs nothing more.
    public static let unheldLimit = 4_096
    /// The most chains of one ``SyncMessage/unsigned(_:)`` that are
    /// answered (each may read an op back from the store): an honest peer
    /// names one a game it was pushed live, many times fewer.
    public static let unsignedLimit = 1_024
    /// The most head signatures of one ``SyncMessage/heads(_:)`` that are
    /// checked (each costs a signature check on the loop): an honest peer
    /// sends one a game it pushed live, or one a chain asked for.
    public static let headsLimit = 4_096
    /// The link's peer, as its handshake proved: the author of every live
    /// push it sends. Live pushes from a peer not set are dropped.
    public var peer: PeerID?
    /// This side's own identity when the peer takes live pushes (peer
    /// protocol 8): this author's new ops go to it as live pushes. `nil`:
    /// every op goes in signed segments.
    public var liveAuthor: PeerID?
    /// How many of its own ops a side pushes live in a game before it signs
    /// the chain head in the push itself.
    public static let headInterval = 32
    /// How long a player goes without a move before its daemon signs, on
    /// every link, the heads of the ops it pushed live there
    /// (``signHeads(replica:)``). A receiver needs them only to relay those
    /// ops to a peer out of the author's reach (which it asks for at once
    /// instead of waiting) or to hand them on later; until then a player
    /// who plays on costs no signature.
    public static let headPause: Duration = .seconds(10)
    /// Whether the peer takes segments in the link's compact form
    /// (``SyncMessage/chains(_:)``, peer protocol 15): a catch-up or a relay
    /// then names the game and the author as the link knows them, and
    /// leaves out the membership proof and the hash the peer holds.
    public var peerTakesChains = false
    /// Whether both sides speak peer protocol 18 (``SyncSession+Provisional.swift``):
    /// ops pushed live before their author kept them give way to what it kept.
    public var provisional = false
    /// The summaries this side sent, for a quiet link's anti-entropy (``tick(replica:)``).
    var antiEntropy = AntiEntropyState()
    /// What this side said of live pushes, and what the peer said.
    var liveOut = LiveLinkState()
    var liveIn = LiveLinkState()
    /// The circle's membership proofs of the authors of ops sent or taken
    /// in the compact form, once worked out.
    private var proofs: [PeerID: [UInt8]] = [:]
    /// Per game, this side's own ops pushed live that no signature sent on
    /// this link covers yet: how many, and the newest.
    public internal(set) var unsignedOnLink: [GameID: (count: Int, seq: UInt64)] = [:]

    /// A session that has exchanged nothing yet.
    public init() {}

    /// The first message: this replica's summary, asking for the peer's.
    public mutating func start(replica: Replica) -> [SyncMessage] {
        [summaryMessage(of: replica, wantsReply: true)]
    }

    /// This side's interest, then its summary asking for the peer's: what
    /// a side that does not take every game sends first to a peer that
    /// understands interests, and again whenever its interest changes, so
    /// that the peer sends the games now taken and no others.
    public mutating func start(replica: Replica, interest: GameInterest) -> [SyncMessage] {
        [.interest(interest), summaryMessage(of: replica, wantsReply: true)]
    }

    /// The replica's summary as this peer is sent it: without the games it
    /// said it does not take (those it forgot), so that nothing of them
    /// reaches it. A peer that takes only some games (`sync mine`) is told
    /// of every game, so that it can offer them to follow.
    func summary(of replica: Replica) -> [GameID: VersionVector] {
        guard case .allBut(let excluded) = peerInterest, !excluded.isEmpty else { return replica.summary }
        return replica.summary.filter { !excluded.contains($0.key) }
    }

    /// A summary message, its games noted when it is the first this side
    /// sends: the peer's live pushes and heads name them by their places in it.
    mutating func summaryMessage(of replica: Replica, wantsReply: Bool) -> SyncMessage {
        summaryMessage(summary(of: replica), wantsReply: wantsReply)
    }

    /// A summary message of `games` (``summary(of:)``), noted as sent.
    mutating func summaryMessage(_ games: [GameID: VersionVector], wantsReply: Bool) -> SyncMessage {
        liveIn.note(summary: games)
        antiEntropy.sent(games)
        return .summary(games, wantsReply: wantsReply)
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
        /// Sleeping games the peer lacks ops of, past what this message
        /// may read back (``Replica/wakeBudget``): the owner reads them
        /// elsewhere (``Replica/wakeJob(for:)``) and sends them with
        /// ``SyncSession/carrying(_:replica:)``.
        public var catchUps: [CatchUp] = []
        /// What the peer did that no honest peer does (a live push naming a
        /// game number never given, a head signature that is not its
        /// author's): the owner drops the link.
        public var violation: String?
    }

    /// Handles one message from the peer; ops of games outside `interest`
    /// (what this side takes) are dropped, counted in ``Step/unwanted``.
    public mutating func receive(_ message: SyncMessage, replica: inout Replica, taking interest: GameInterest = .everything) -> Step {
        var step = Step()
        switch message {
        case .summaryPart(let part):
            summaryParts.merge(Self.bounded(part, given: summaryParts, replica: replica)) { _, new in new }
            if summaryParts.count > summaryPartsLimit {
                summaryParts = [:]
                step.violation = "a summary of more than \(summaryPartsLimit) games"
            }
        case .summary(let last, let wantsReply):
            var games = Self.bounded(last, given: summaryParts, replica: replica)
            if !summaryParts.isEmpty {
                games = summaryParts.merging(games) { _, new in new }
                summaryParts = [:]
            }
            if provisional { dropLostOps(said: games, replica: &replica, into: &step) }
            hasPeerSummary = true
            peerHolds = games
            antiEntropy.heard(games)
            liveOut.note(summary: games)
            var segments: [OpSegment] = []
            for game in replica.summary.keys.sorted() where sends(game, of: replica) {
                let theirs = games[game] ?? VersionVector()
                // A sleeping game read back past the message's budget is read elsewhere (``Step/catchUps``).
                if let asleep = replica.sleeping[game], let budget = replica.wakeBudget, !theirs.dominates(asleep.vector) {
                    guard asleep.opCount <= budget else {
                        step.catchUps.append(CatchUp(game: game, after: theirs))
                        continue
                    }
                    replica.wakeBudget = budget - asleep.opCount
                }
                segments += replica.segments(for: game, after: theirs)
            }
            step.replies += messages(carrying: segments, replica: replica)
            // Answer with our summary only when the peer holds ops we lack:
            // otherwise it would have nothing to send us.
            let ours = replica.summary
            if wantsReply, games.contains(where: { interest.contains($0.key) && !(ours[$0.key]?.dominates($0.value) ?? false) }) {
                step.replies.append(summaryMessage(of: replica, wantsReply: false))
            }
            // Games this side does not take (`sync mine`): what are they?
            step.replies += describeRequests(for: games.keys.filter { ours[$0] == nil && !interest.contains($0) })
        case .ops(let segments):
            for segment in segments { receive(segment, replica: &replica, taking: interest, into: &step) }
        case .chains(let segments):
            // Rebuilt from the ops held before them, read without waking a
            // sleeping game: the replica wakes it once the segment passes its checks.
            receive(chains: segments, replica: &replica, taking: interest, into: &step)
        case .interest(let interest):
            peerInterest = interest
        case .live(let ops):
            receive(live: ops, replica: &replica, taking: interest, into: &step)
        case .heads(let heads):
            // Head signatures only from a peer that may write: a holder of the
            // circle key no admission names makes this side read nothing.
            if let peer, !replica.mayWrite(peer) { break }
            for head in heads.prefix(Self.headsLimit) {
                guard let game = liveIn.resolve(head.game, reverse: liveOut) else {
                    step.violation = "a head signature naming a game never given"
                    break
                }
                guard let author = head.author ?? peer else { continue }
                let outcome = replica.attach(head.signature, to: ChainHead(game: game, author: author, seq: head.seq))
                // The peer's own head that does not match is what no honest peer
                // sends (but of ops it pushed and lost before keeping them);
                // another author's may be the head of a fork that author
                // made, which an honest peer hands on unknowing: refused only.
                if !outcome.rejected.isEmpty && author == peer {
                    if provisional && dropLostOps(under: ChainHead(game: game, author: author, seq: head.seq), replica: &replica, into: &step) { continue }
                    step.violation = "a head signature that is not its author's"
                }
                step.outcome.merge(outcome)
            }
        case .unsigned(let chains):
            // Only so many: what a peer asks for here is read back on the loop before anything else.
            var heads: [HeadSignature] = []
            for chain in chains.prefix(Self.unsignedLimit) where sends(chain.game, of: replica) {
                guard let signature = replica.op(in: chain.game, author: chain.author, seq: chain.seq)?.signature,
                    let head = head(of: chain, signature: signature)
                else { continue }
                heads.append(head)
                if chain.author == liveAuthor, let unsigned = unsignedOnLink[chain.game], unsigned.seq <= chain.seq {
                    unsignedOnLink[chain.game] = nil
                }
            }
            if !heads.isEmpty { step.replies.append(.heads(heads)) }
        case .describe(let games):
            // Only of games the peer can read: a description holds the genesis.
            // A sleeping game is described from its overview and its genesis op, unwoken.
            let descriptions = games.filter { reads(replica.features(of: $0)) }.compactMap { Self.description(of: $0, in: replica) }
            if !descriptions.isEmpty { step.replies.append(.descriptions(descriptions)) }
        case .descriptions(let descriptions):
            // Only what was asked: the id is derived from what the
            // description says, so a holder cannot describe another game.
            // The id is hashed once, over the genesis, as the overview is read.
            for overview in descriptions.map(GameOverview.init(described:)) where askedToDescribe.contains(overview.gameID) {
                described[overview.gameID] = overview
            }
        }
        return step
    }

    /// `games` of a peer's summary as the session keeps them: every game
    /// this side holds, and of the others as many as fit, with those kept
    /// already (`given`), within ``unheldLimit``. One pass, no sort: a
    /// part of 100,000 made-up games costs what reading it costs.
    static func bounded(_ games: [GameID: VersionVector], given: [GameID: VersionVector], replica: Replica) -> [GameID: VersionVector] {
        var room = unheldLimit - given.keys.reduce(0) { $0 + (replica.isKnown($1) ? 0 : 1) }
        if games.count <= room { return games }
        // Looked up from this side (the games held, those kept already), then
        // the part read only until the room is full: a part of 100,000
        // made-up games costs what the games held here and the room cost.
        var out: [GameID: VersionVector] = [:]
        out.reserveCapacity(room + 1_024)
        for id in replica.games.keys where replica.games[id]?.isKnown == true { if let v = games[id] { out[id] = v } }
        for id in replica.sleeping.keys { if let v = games[id] { out[id] = v } }
        for id in given.keys { if let v = games[id] { out[id] = v } }
        guard room > 0 else { return out }
        for (id, vector) in games where out[id] == nil && given[id] == nil {
            out[id] = vector
            room -= 1
            if room == 0 { break }
        }
        return out
    }

    /// The requests that ask the peer to describe `unheld` games of its
    /// summary, those not asked before, up to ``describedLimit`` in all.
    private mutating func describeRequests(for unheld: some Sequence<GameID>) -> [SyncMessage] {
        guard peerDescribes else { return [] }
        let room = Self.describedLimit - askedToDescribe.count
        let new = unheld.filter { !askedToDescribe.contains($0) }.sorted().prefix(max(0, room))
        askedToDescribe.formUnion(new)
        return stride(from: 0, to: new.count, by: SyncMessage.describeLimit).map { start in
            .describe(Array(new.dropFirst(start).prefix(SyncMessage.describeLimit)))
        }
    }

    /// How this replica describes `game` to a peer that does not hold it:
    /// open games only (a private game's genesis says nothing to others).
    static func description(of game: GameID, in replica: Replica) -> GameDescription? {
        if let asleep = replica.sleeping[game] {
            guard asleep.privateHeader == nil, let overview = asleep.overview, !overview.isPrivate,
                case .genesis(let genesis)? = replica.op(in: game, author: overview.creator, seq: 1)?.payload
            else { return nil }
            return GameDescription(
                creator: overview.creator, genesis: genesis, status: overview.status,
                progressPermille: Int((overview.creatorProgress * 1000).rounded(.down)))
        }
        guard let g = replica.games[game], g.privateHeader == nil, let state = g.state else { return nil }
        return GameDescription(
            creator: state.creator, genesis: state.genesis, status: state.status,
            progressPermille: Int((state.board.progress * 1000).rounded(.down)))
    }

    /// The games a live push or a chains message from the peer names, as
    /// this session would read it now (by id, number or summary place; see
    /// ``LinkGameRef``); nothing for other messages.
    public func games(in message: SyncMessage) -> Set<GameID> {
        let refs: [LinkGameRef]
        switch message {
        case .live(let ops): refs = ops.map(\.game)
        case .chains(let segments): refs = segments.map(\.game)
        default: return []
        }
        var out: Set<GameID> = []
        for ref in refs {
            if let id = liveIn.game(ref, reverse: liveOut) { out.insert(id) }
        }
        return out
    }

    /// Takes one segment of the peer's: inserted when its game is of this
    /// side's interest, and noted as held by the peer.
    private mutating func receive(_ segment: OpSegment, replica: inout Replica, taking interest: GameInterest, into step: inout Step) {
        if let game = segment.ops.last?.gameID, !interest.contains(game) {
            step.unwanted += segment.ops.count
            return
        }
        step.outcome.merge(replica.insert(segment))
        // Segments come from the sender's contiguous chains: it holds everything up to the last op.
        if let last = segment.ops.last {
            peerHolds[last.gameID, default: VersionVector()].advance(last.author, to: last.seq)
        }
    }

    /// Takes segments in the link's compact form: each is rebuilt into an
    /// ``OpSegment`` (its game and author as the link names them, the
    /// circle's proof for the author, the hash before it as given or as
    /// held here) and taken as one. A segment whose op before the first is
    /// not held here is dropped (its sender was wrong about what this side
    /// holds, after a catch-up it dropped or ops refused here), and a
    /// summary asks for what is missing.
    private mutating func receive(chains segments: [LinkSegment], replica: inout Replica, taking interest: GameInterest, into step: inout Step) {
        var askForSummary = false
        for segment in segments {
            guard let game = liveIn.game(segment.game, reverse: liveOut) else {
                step.violation = "a segment naming a game never given"
                return
            }
            let author: PeerID
            switch segment.author {
            case .sender:
                guard let peer else { continue }
                author = peer
            case .key(let key):
                author = key
            case .summarized(let i):
                guard let authors = liveOut.summaryAuthors, i < authors.count else {
                    step.violation = "a segment naming an author its summary did not"
                    return
                }
                author = authors[i]
            }
            guard interest.contains(game) else {
                step.unwanted += segment.count
                continue
            }
            guard let before = segment.previous ?? Self.hash(before: segment.firstSeq, of: author, in: game, replica) else {
                askForSummary = true
                continue
            }
            let rebuilt = segment.ops(game: game, author: author, proof: proof(of: author, in: replica), previous: before)
            receive(rebuilt, replica: &replica, taking: interest, into: &step)
        }
        if askForSummary { step.replies.append(summaryMessage(of: replica, wantsReply: true)) }
    }

    /// Messages that carry `segments` to the peer, noted as sent: in the
    /// link's compact form to a peer that takes it, else (and for a
    /// segment whose ops carry another proof than the circle's for their
    /// author, which no op accepted here does) as ``SyncMessage/ops(_:)``.
    mutating func messages(carrying segments: [OpSegment], replica: Replica) -> [SyncMessage] {
        guard !segments.isEmpty else { return [] }
        defer { note(sent: segments) }
        guard peerTakesChains else { return [.ops(segments)] }
        var chains: [LinkSegment] = []
        var plain: [OpSegment] = []
        for segment in segments {
            guard let first = segment.ops.first, first.membershipProof == proof(of: first.author, in: replica) else {
                plain.append(segment)
                continue
            }
            let author: LinkSegment.Author
            if first.author == liveAuthor {
                author = .sender
            } else if let i = liveIn.place(of: first.author) {
                author = .summarized(i)
            } else {
                author = .key(first.author)
            }
            // The peer holds the op before the first when it said so, or was sent it.
            let known = first.seq > 1 && (peerHolds[first.gameID]?[first.author] ?? 0) >= first.seq - 1
            let game = liveOut.existingReference(to: first.gameID, reverse: liveIn)
            guard let compact = LinkSegment(segment, game: game, author: author, previousKnown: known) else {
                plain.append(segment)
                continue
            }
            chains.append(compact)
        }
        var out: [SyncMessage] = []
        if !plain.isEmpty { out.append(.ops(plain)) }
        if !chains.isEmpty { out.append(.chains(chains)) }
        return out
    }

    /// Takes the peer's live pushes: each is rebuilt into its complete op
    /// (the peer its author with the circle's membership proof for it, the
    /// hash before it from this replica) and
    /// inserted unsigned, or with its signature when it carries one. A push
    /// that does not follow an op held here is dropped and a summary asks
    /// for what is missing.
    private mutating func receive(live ops: [LiveOp], replica: inout Replica, taking interest: GameInterest, into step: inout Step) {
        var askForSummary = false
        for live in ops {
            guard let game = liveIn.resolve(live.game, reverse: liveOut) else {
                step.violation = "a live push naming a game never given"
                return
            }
            let seq: UInt64, lamport: UInt64, wall: UInt64
            switch live.position {
            case .absolute(let s, let l, let w):
                (seq, lamport, wall) = (s, l, w)
            case .next(let lamportStep, let wallChange):
                guard let newest = liveIn.newest[game] else {
                    step.violation = "a live push that follows nothing said on the link"
                    return
                }
                let (sum, overflow) = newest.lamport.addingReportingOverflow(lamportStep)
                guard !overflow, sum < UInt64.max else {
                    step.violation = "a live push whose Lamport time overflows"
                    return
                }
                (seq, lamport, wall) = (newest.seq + 1, sum + 1, newest.wall &+ UInt64(bitPattern: wallChange))
            }
            liveIn.newest[game] = (seq, lamport, wall)
            guard let peer else { continue }
            guard interest.contains(game) else {
                step.unwanted += 1
                continue
            }
            guard let previous = Self.hash(before: seq, of: peer, in: game, replica) else {
                // Held already (a duplicate), or after a gap: a summary brings what is missing.
                if replica.hash(in: game, author: peer, seq: seq) == nil { askForSummary = true }
                continue
            }
            let op = Op(
                gameID: game, author: peer, seq: seq, lamport: lamport, previous: previous, wallClockMillis: wall,
                membershipProof: proof(of: peer, in: replica), payload: live.payload, signature: live.signature)
            step.outcome.merge(live.signature == nil ? replica.insert(vouched: op, givingWay: provisional) : replica.insert(op))
            peerHolds[game, default: VersionVector()].advance(peer, to: seq)
        }
        if askForSummary { step.replies.append(summaryMessage(of: replica, wantsReply: true)) }
    }

    /// The circle's membership proof for `author`, which the peer's live
    /// ops and every op of the compact form carry.
    private mutating func proof(of author: PeerID, in replica: Replica) -> [UInt8] {
        if let proof = proofs[author] { return proof }
        let proof = replica.circle.membershipProof(for: author)
        if proofs.count < LinkSegment.authorLimit { proofs[author] = proof }
        return proof
    }

    /// Decodes and handles one message from the peer. Bytes that do not
    /// decode are counted in the replica (``OpRejection/malformed``) and
    /// rethrown, so that the transport can drop and log the peer.
    public mutating func receive(
        encoded bytes: [UInt8], replica: inout Replica, taking interest: GameInterest = .everything
    ) throws(ByteDecodingError) -> Step {
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
        var liveOps: [LiveOp] = []
        for (game, authors) in chains.sorted(by: { $0.key < $1.key }) where sends(game, of: replica) {
            guard let replicaGame = replica.games[game] else { continue }
            let creator = replicaGame.state?.creator
            let ordered = authors.sorted { a, b in (a == creator) != (b == creator) ? a == creator : a < b }
            for author in ordered {
                // Live only when the peer holds everything before the new ops: it rebuilds each from the one before.
                let earliest = accepted.filter { $0.gameID == game && $0.author == author }.map(\.seq).min() ?? 1
                if author == liveAuthor, hasPeerSummary, (peerHolds[game]?[author] ?? 0) + 1 >= earliest,
                    let pushed = live(game, after: peerHolds[game]?[author] ?? 0, replica: replica)
                {
                    liveOps += pushed
                    continue
                }
                var floor = peerHolds[game]?[author] ?? 0
                if !hasPeerSummary {
                    // Unknown peer state: send just the new ops; a summary fills any gap.
                    floor = max(floor, earliest - 1)
                }
                if let segment = replicaGame.segment(of: author, after: floor) { segments.append(segment) }
            }
        }
        var messages = self.messages(carrying: segments, replica: replica)
        if !liveOps.isEmpty { messages.append(.live(liveOps)) }
        return messages
    }

    /// Whether the peer is sent `game`: it takes it, and can read it.
    func sends(_ game: GameID, of replica: Replica) -> Bool {
        guard peerInterest.contains(game) else { return false }
        return reads(replica.features(of: game))
    }

    /// Whether the peer can read a game in `state` (or one unread here).
    private func reads(_ state: GameState?) -> Bool {
        reads(state?.features)
    }

    /// Whether the peer can read a game of `features` (`nil`: one unread here).
    private func reads(_ features: GameFeatures?) -> Bool {
        features.map { $0.isSubset(of: peerReads) } ?? true
    }

    private mutating func note(sent segments: [OpSegment]) {
        for s in segments {
            if let last = s.ops.last { peerHolds[last.gameID, default: VersionVector()].advance(last.author, to: last.seq) }
        }
    }
}
