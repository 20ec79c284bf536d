import SweeperCrypto
import SweeperGame

/// Every game a daemon holds, and the rules that decide which ops get in:
/// a valid membership proof for the circle, a valid signature (or a chain
/// vouched for by the signature of its newest op), a contiguous chain per
/// author, and a known genesis. Ops that arrive early wait; refused ops are
/// counted in ``rejectionCounts`` and change nothing.
public struct Replica: Sendable {
    /// The most ops that may wait, over all games, before more are refused.
    public static let defaultPendingLimit = 200_000
    /// How many of each chain's newest ops stay in memory unless told
    /// otherwise, when an archive holds the rest: what a peer a few moves
    /// behind asks for.
    public static let defaultRecentOpsKept = 64

    /// The circle whose members' ops are accepted.
    public let circle: CircleKey
    /// The games held awake, by id: those asleep (see ``sleep(_:)``) are in
    /// ``sleeping``.
    public internal(set) var games: [GameID: GameReplica] = [:]
    /// The games let go of memory, by id: woken by any op of theirs (see
    /// ``wake(_:)``).
    public internal(set) var sleeping: [GameID: SleepingGame] = [:]
    /// When each game was last used (a count of uses, see ``use(_:)``):
    /// the least recently used sleep first.
    var lastUse: [GameID: UInt64] = [:]
    var useCounter: UInt64 = 0

    /// Notes that `author` signed two ops at one place of `game`
    /// (``GameReplica/noteEquivocator(_:)``); nothing when the game is not held.
    public mutating func noteEquivocator(_ author: PeerID, in game: GameID) {
        games[game]?.noteEquivocator(author)
        sleeping[game]?.equivocators.insert(author)
    }
    /// How many ops were refused, by reason.
    public private(set) var rejectionCounts: [OpRejection: Int] = [:]
    /// The waiting-op limit.
    public let pendingLimit: Int
    /// Authors removed from the circle, and per game how many of their ops
    /// stay: later ones are refused (``OpRejection/removedAuthor``).
    public private(set) var removed: [PeerID: [GameID: UInt64]] = [:]
    /// The devices whose new ops are taken (the circle's members, and the
    /// removed devices up to what their removal kept); `nil` takes every
    /// holder of a membership proof under the circle's first key. Ops
    /// already held stay.
    public private(set) var authors: Set<PeerID>?

    /// Authors whose ops taken here lately reached what the owner lets one
    /// author fill in a day (the daemon's per-author quota): their new ops
    /// are refused (``OpRejection/overDailyQuota``) until the owner takes
    /// them out; those held stay.
    public var overDailyQuota: Set<PeerID> = []

    /// Who reads private games here (their players' keys are sealed to
    /// identities): this device's player, then the players it hosts; none
    /// reads no private game. A game's replica takes the readers as they
    /// are when it is made (or woken).
    public var readers: [SigningIdentity]
    /// The first reader: this device's player.
    public var reader: SigningIdentity? { readers.first }

    /// Where ops that left memory are read back (see ``noteStored(_:)``);
    /// `nil` keeps every op in memory.
    public let archive: (any OpArchive)?

    /// How many times ops that left memory could not be read back when a
    /// removal or a sleeping game needed them (the game was left as it was).
    public internal(set) var archiveFaults = 0
    /// Per author, how many times its ops held unsigned gave way here (``giveWayLimit``).
    var gaveWay: [PeerID: Int] = [:]

    /// How many of each chain's newest ops stay in memory when an archive holds the rest.
    public let recentOpsKept: Int

    /// How many ops may still be read back to wake sleeping games here
    /// (what one peer message may cost the thread that handles it); `nil`
    /// bounds nothing. A game past it stays asleep, its ops are refused
    /// (``OpRejection/wakeDeferred``) and it joins ``deferredWakes``.
    public var wakeBudget: Int?
    /// The ``wakeBudget`` the daemon gives one peer message: some 10 ms of
    /// reading back and rebuilding.
    public static let wakeBudgetPerMessage = 4_096
    /// What reading one op back to check a signature costs of ``wakeBudget``:
    /// a lone read costs what reading some 32 ops of a chain in a row does.
    static let opReadBackCost = 32
    /// The sleeping games that ops passing every check needed awake past
    /// ``wakeBudget``: the owner wakes them elsewhere (``wakeJob(for:)``),
    /// then asks their sender for the ops again.
    public internal(set) var deferredWakes: Set<GameID> = []

    /// An empty replica for `circle`, reading the private games that
    /// `reader` plays in, and reading ops that left memory from `archive`
    /// (each chain's newest `recentOpsKept` ops stay).
    public init(
        circle: CircleKey, reader: SigningIdentity? = nil, alsoReading: [SigningIdentity] = [], archive: (any OpArchive)? = nil,
        recentOpsKept: Int = Replica.defaultRecentOpsKept, pendingLimit: Int = Replica.defaultPendingLimit
    ) {
        self.circle = circle
        self.readers = (reader.map { [$0] } ?? []) + alsoReading
        self.archive = archive
        self.recentOpsKept = recentOpsKept
        self.pendingLimit = pendingLimit
    }

    /// A new game's replica.
    private func newGame(_ id: GameID) -> GameReplica {
        GameReplica(gameID: id, readers: readers, archive: archive, recentOpsKept: recentOpsKept)
    }

    /// Notes that the store holds `ops` (and, per chain, every op before
    /// them): with an archive, their games let go of the ops a signature
    /// covers, their newest aside (see ``GameReplica/noteStored(_:through:)``).
    public mutating func noteStored(_ ops: some Sequence<Op>) {
        var newest: [GameID: [PeerID: UInt64]] = [:]
        for op in ops { newest[op.gameID, default: [:]][op.author] = max(newest[op.gameID]?[op.author] ?? 0, op.seq) }
        for (game, heads) in newest {
            for (author, seq) in heads { games[game]?.noteStored(author, through: seq) }
        }
    }

    /// Notes that the store holds `author`'s first `seq` ops of `game`
    /// (a removed device's ops its removal kept, all in memory again after
    /// the cut: see ``remove(_:kept:)``).
    public mutating func noteStored(_ author: PeerID, in game: GameID, through seq: UInt64) {
        games[game]?.noteStored(author, through: seq)
    }

    /// Notes that the store holds every op accepted here (after a restore
    /// from it).
    public mutating func noteEverythingStored() {
        for id in Array(games.keys) {
            guard var game = games[id] else { continue }
            for author in game.authors { game.noteStored(author, through: game.chainLength(of: author)) }
            games[id] = game
        }
    }

    /// The replicated state of `game`, once its genesis is known, when it
    /// is awake.
    public func state(of game: GameID) -> GameState? { games[game]?.state }

    /// The games with a known genesis, awake or asleep, and their version vectors.
    public var summary: [GameID: VersionVector] {
        var out: [GameID: VersionVector] = [:]
        for (id, g) in games where g.isKnown { out[id] = g.vector }
        for (id, g) in sleeping { out[id] = g.vector }
        return out
    }

    /// `ops` refused because their game sleeps and could not be read back,
    /// or may not be here now (``wakeBudget``).
    private mutating func refused(_ ops: [Op]) -> InsertOutcome {
        var outcome = InsertOutcome()
        for op in ops {
            outcome.rejected.append((op.gameID, op.author, op.seq, deferredWakes.contains(op.gameID) ? .wakeDeferred : .storageFault))
        }
        count(outcome)
        return outcome
    }

    /// How many ops may wait in `game`: what is left of ``pendingLimit``,
    /// and of a quarter of it for `author` (a member whose ops can never
    /// follow on fills its own share, not everyone's), and of
    /// ``pendingBytesLimit``.
    private func waitingRoom(in game: GameID, for author: PeerID) -> GameReplica.WaitingRoom {
        var (all, own, bytes) = (0, 0, 0)
        for g in games.values { (all, own, bytes) = (all + g.pendingCount, own + g.waitingCount(of: author), bytes + g.pendingBytes) }
        let here = games[game]
        return GameReplica.WaitingRoom(
            game: max(0, pendingLimit - all + (here?.pendingCount ?? 0)),
            author: max(0, pendingLimit / 4 - own + (here?.waitingCount(of: author) ?? 0)),
            bytes: max(0, Self.pendingBytesLimit - bytes + (here?.pendingBytes ?? 0)))
    }

    /// The most bytes of ops that wait at once, over every game (a sealed
    /// op may hold 4 MiB): past it, an op that cannot follow on is refused
    /// and comes again with the next summary exchange.
    public static let pendingBytesLimit = 64 << 20

    private mutating func count(_ outcome: InsertOutcome) {
        for r in outcome.rejected { rejectionCounts[r.reason, default: 0] += 1 }
    }

    /// Drops a game and every op of it, held or waiting (this device
    /// forgets it); `false` when it was not here.
    @discardableResult
    public mutating func forget(_ game: GameID) -> Bool {
        lastUse[game] = nil
        let asleep = sleeping.removeValue(forKey: game) != nil
        return games.removeValue(forKey: game) != nil || asleep
    }

    /// Removes `author` from the circle: of its ops, per game, the first
    /// `kept` stay (none in a game not listed) and the rest are dropped now
    /// and refused from now on. Returns, per game that lost ops, the ops dropped.
    @discardableResult
    public mutating func remove(_ author: PeerID, kept: [GameID: UInt64]) -> [GameID: [Op]] {
        removed[author] = kept
        for (id, game) in sleeping where game.vector[author] > kept[id] ?? 0 { wake(id) }
        var dropped: [GameID: [Op]] = [:]
        for id in Array(games.keys) {
            do {
                let ops = try games[id]?.truncate(author, keeping: kept[id] ?? 0) ?? []
                if !ops.isEmpty { dropped[id] = ops }
            } catch {
                archiveFaults += 1
            }
        }
        return dropped
    }

    /// Lifts `author`'s removal when an admin admitted it again: in each
    /// game its removal lists, its ops after the `kept` ones (written before
    /// it came back, and gone everywhere) are dropped now, as its removal
    /// dropped them, in case this replica never applied the removal; its
    /// new ops are taken from now on, in every game. Returns, per game
    /// that lost ops, the ops dropped.
    @discardableResult
    public mutating func readmit(_ author: PeerID, kept: [GameID: UInt64]) -> [GameID: [Op]] {
        removed[author] = nil
        for (id, game) in sleeping where kept[id].map({ game.vector[author] > $0 }) == true { wake(id) }
        var dropped: [GameID: [Op]] = [:]
        for (id, n) in kept where games[id] != nil {
            do {
                let ops = try games[id]?.truncate(author, keeping: n) ?? []
                if !ops.isEmpty { dropped[id] = ops }
            } catch {
                archiveFaults += 1
            }
        }
        return dropped
    }

    /// Takes new ops only from `authors` (see ``authors``).
    public mutating func admitAuthors(_ authors: Set<PeerID>?) { self.authors = authors }

    /// Every device with an op held in some game.
    public var heldAuthors: Set<PeerID> {
        var out: Set<PeerID> = []
        for game in games.values { out.formUnion(game.authors) }
        for game in sleeping.values { out.formUnion(game.vector.heads.keys) }
        return out
    }

    /// Whether `author` may write new ops now: the circle's records admit
    /// it (when they are consulted) and no removal cut it. Its ops are
    /// checked one by one still (a removed device's kept ops stand).
    public func mayWrite(_ author: PeerID) -> Bool {
        (authors.map { $0.contains(author) } ?? true) && removed[author] == nil
    }

    /// Whether `author` may write new ops: it proves the first key, and the
    /// circle's records admitted it (when they are consulted).
    private func isAuthorized(_ author: PeerID, proof: [UInt8]) -> Bool {
        circle.isValidMembershipProof(proof, for: author) && authors.map { $0.contains(author) } ?? true
    }

    /// Whether `op` comes after what a removal of its author kept.
    private func isRemoved(_ op: Op) -> Bool {
        guard let kept = removed[op.author] else { return false }
        return op.seq > kept[op.gameID] ?? 0
    }

    /// In a board of the day whose daily op came after other authors' ops,
    /// drops those ops (``GameReplica/dropOthersFromDaily()``) and says so
    /// in `outcome`: every replica then holds the creator's ops alone,
    /// whatever order they came in.
    private mutating func settleDaily(_ id: GameID, _ outcome: inout InsertOutcome) {
        guard games[id]?.holdsOthersInDaily == true else { return }
        do {
            outcome.noteDropped(try games[id]?.dropOthersFromDaily() ?? [])
        } catch {
            archiveFaults += 1
        }
    }

    /// Counts an input that could not be decoded.
    public mutating func countMalformed() { rejectionCounts[.malformed, default: 0] += 1 }

    /// Inserts one op that must carry its own signature (a push).
    @discardableResult
    public mutating func insert(_ op: Op) -> InsertOutcome {
        var outcome = InsertOutcome()
        if let early = refusalBeforeWaking(op, signed: true) { return early }
        guard wake(op.gameID) else { return refused([op]) }
        if let same = games[op.gameID]?.holds(op), same {
            if let signature = op.signature, games[op.gameID]?.isUnsigned(author: op.author, seq: op.seq) == true {
                // Held without a signature (a live push): this one vouches for it.
                return attach(signature, to: ChainHead(game: op.gameID, author: op.author, seq: op.seq))
            }
            outcome.duplicates = 1
            return outcome
        }
        return admit(op, signed: true)
    }

    /// The refusal of an op of a sleeping game that fails a check needing
    /// nothing of the game (its author's standing, its signature when
    /// `signed`): found before the game is woken, so that nobody without a
    /// right to write makes this device rebuild a game. `nil` when the game
    /// is awake (``admit(_:signed:)`` checks) or the op passes.
    private mutating func refusalBeforeWaking(_ op: Op, signed: Bool) -> InsertOutcome? {
        guard sleeping[op.gameID] != nil else { return nil }
        let reason: OpRejection
        if !isAuthorized(op.author, proof: op.membershipProof) {
            reason = .notMember
        } else if isRemoved(op) {
            reason = .removedAuthor
        } else if overDailyQuota.contains(op.author) {
            reason = .overDailyQuota
        } else if signed && !op.hasValidSignature {
            reason = .badSignature
        } else if let cells = sleeping[op.gameID]?.overview?.parameters.geometry.cellCount, op.seq > GameReplica.opQuota(cells: cells) {
            reason = .overQuota
        } else {
            return nil
        }
        var outcome = InsertOutcome()
        outcome.rejected.append((op.gameID, op.author, op.seq, reason))
        count(outcome)
        return outcome
    }

    /// Admits one op not held yet: its membership proof, its author's
    /// standing and (when `signed`) its own signature checked. A signed op,
    /// or with `givingWay` one at the place of its author's newest op,
    /// takes the place of a different op held there unsigned.
    private mutating func admit(_ op: Op, signed: Bool, givingWay: Bool = false) -> InsertOutcome {
        var outcome = InsertOutcome()
        if !isAuthorized(op.author, proof: op.membershipProof) {
            outcome.rejected.append((op.gameID, op.author, op.seq, .notMember))
        } else if isRemoved(op) {
            outcome.rejected.append((op.gameID, op.author, op.seq, .removedAuthor))
        } else if overDailyQuota.contains(op.author) {
            outcome.rejected.append((op.gameID, op.author, op.seq, .overDailyQuota))
        } else if signed && !op.hasValidSignature {
            outcome.rejected.append((op.gameID, op.author, op.seq, .badSignature))
        } else {
            if games[op.gameID] == nil { games[op.gameID] = newGame(op.gameID) }
            // On its author's word alone, only at the place of its newest op.
            let mayTakePlace =
                signed
                || (givingWay
                    && games[op.gameID].map { $0.chainLength(of: op.author) == op.seq || $0.waits(author: op.author, seq: op.seq) } ?? false)
            if mayTakePlace, !giveWay(to: op, &outcome) {
                outcome.rejected.append((op.gameID, op.author, op.seq, .storageFault))
            } else {
                // The waiting list is counted over every game only for an op that may wait: a move that follows on takes no room.
                let room = games[op.gameID]?.follows(op) == true ? .unbounded : waitingRoom(in: op.gameID, for: op.author)
                games[op.gameID]?.admit(op, room: room, outcome: &outcome)
            }
            settleDaily(op.gameID, &outcome)
        }
        count(outcome)
        return outcome
    }

    /// Inserts an op that came without a signature from its author, over a
    /// link whose handshake proved the author's key (a live push; see
    /// ``SyncMessage/live(_:)``), or from this device's own store, where it
    /// was kept so: everything but the signature is checked. A signature
    /// of a later op vouches for it when it comes (``attach(_:to:)``); until
    /// then it is applied and shown, but not relayed. With `givingWay`
    /// (a link of peer protocol 18), an op at the place of its author's
    /// newest op, held unsigned, takes that place: the author pushed that
    /// one and stopped before keeping it.
    @discardableResult
    public mutating func insert(vouched op: Op, givingWay: Bool = false) -> InsertOutcome {
        if let early = refusalBeforeWaking(op, signed: false) { return early }
        guard wake(op.gameID) else { return refused([op]) }
        if let same = games[op.gameID]?.holds(op), same {
            var outcome = InsertOutcome()
            outcome.duplicates = 1
            return outcome
        }
        return admit(op, signed: false, givingWay: givingWay)
    }

    /// Attaches a signature to a held op of `chain` (its `seq`): the op and
    /// those before it are vouched for from now on, and come back in
    /// ``InsertOutcome/signed``. A signature that is not the author's of
    /// the op held is refused (``OpRejection/badSignature``), even when the
    /// op is signed already; one for an op not held changes nothing.
    @discardableResult
    public mutating func attach(_ signature: Signature, to chain: ChainHead) -> InsertOutcome {
        var outcome = InsertOutcome()
        // A sleeping game is woken only for a signature it lacks: of a chain
        // it holds unsigned up to that op, by a device that may write.
        if let asleep = sleeping[chain.game] {
            guard authors.map({ $0.contains(chain.author) }) ?? true, removed[chain.author] == nil, chain.seq <= asleep.vector[chain.author] else {
                return outcome
            }
            guard let unsigned = asleep.unsignedHeads[chain.author], chain.seq <= unsigned else {
                // Signed already: checked against the one op read back, as an awake game would check it,
                // while the message's budget lasts (reading one op back costs what reading a few dozen in a row does).
                if let budget = wakeBudget {
                    guard budget >= Self.opReadBackCost else { return outcome }
                    wakeBudget = budget - Self.opReadBackCost
                }
                if let held = op(in: chain.game, author: chain.author, seq: chain.seq), !held.with(signature: signature).hasValidSignature {
                    outcome.rejected.append((chain.game, chain.author, chain.seq, .badSignature))
                    count(outcome)
                }
                return outcome
            }
        }
        guard wake(chain.game), var game = games.removeValue(forKey: chain.game) else { return outcome }
        do {
            if let op = try game.attach(signature, author: chain.author, seq: chain.seq) { outcome.signed.append(op) }
        } catch {
            outcome.rejected.append((chain.game, chain.author, chain.seq, .badSignature))
        }
        games[chain.game] = game
        count(outcome)
        return outcome
    }

    /// Every chain whose newest held ops no signature covers yet, in games
    /// awake or asleep.
    public var unsignedHeads: [ChainHead] {
        Set(games.keys).union(sleeping.keys).sorted().flatMap { id in
            (games[id]?.unsignedHeads ?? sleeping[id]?.unsignedHeads ?? [:]).sorted { $0.key < $1.key }
                .map { ChainHead(game: id, author: $0.key, seq: $0.value) }
        }
    }

    /// Inserts a chain segment: checks its membership proof and the
    /// signature of its last op only, since every op's hash is chained into
    /// the next, then admits its ops in order.
    @discardableResult
    public mutating func insert(_ segment: OpSegment) -> InsertOutcome {
        insert(segment, lastOpProven: false)
    }

    /// Inserts a chain segment; with `lastOpProven`, its last op is known to
    /// be its author's (a later op whose signature was checked names its
    /// hash, through the ops between), so its own signature is not checked.
    mutating func insert(_ segment: OpSegment, lastOpProven: Bool) -> InsertOutcome {
        var outcome = InsertOutcome()
        guard let last = segment.ops.last else { return outcome }
        if sleeping[last.gameID] != nil {
            // Nothing wakes a sleeping game before the segment's author and signature are checked.
            let reason: OpRejection? =
                !isAuthorized(last.author, proof: last.membershipProof)
                ? .notMember
                : isRemoved(last)
                    ? .removedAuthor
                    : overDailyQuota.contains(last.author)
                        ? .overDailyQuota
                        : !segment.isChained || !(lastOpProven || last.hasValidSignature) ? .badSignature : nil
            if let reason {
                for op in segment.ops { outcome.rejected.append((op.gameID, op.author, op.seq, reason)) }
                count(outcome)
                return outcome
            }
        }
        guard wake(last.gameID) else { return refused(segment.ops) }
        // No copy of the game is held here: the game is changed in place below.
        if let same = games[last.gameID]?.holds(last), same,
            last.signature == nil || games[last.gameID]?.isSigned(author: last.author, seq: last.seq) == true
        {
            // Already held up to its end; a mismatch earlier would show as a conflict of `last`.
            outcome.duplicates = segment.ops.count
            return outcome
        }
        if !isAuthorized(last.author, proof: last.membershipProof) {
            for op in segment.ops { outcome.rejected.append((op.gameID, op.author, op.seq, .notMember)) }
        } else if isRemoved(last) {
            // A segment that runs past the cut goes in whole or not at all,
            // like any other: its signature is on an op that may not stay.
            for op in segment.ops { outcome.rejected.append((op.gameID, op.author, op.seq, .removedAuthor)) }
        } else if overDailyQuota.contains(last.author) {
            for op in segment.ops { outcome.rejected.append((op.gameID, op.author, op.seq, .overDailyQuota)) }
        } else if !segment.isChained || !(lastOpProven || last.hasValidSignature) {
            for op in segment.ops { outcome.rejected.append((op.gameID, op.author, op.seq, .badSignature)) }
        } else {
            let room = waitingRoom(in: last.gameID, for: last.author)
            var replica = games.removeValue(forKey: last.gameID) ?? newGame(last.gameID)
            // The segment is its author's (its signature checked above): the
            // first of its ops that differs from an op held unsigned takes its place.
            if mayGiveWay(last.author),
                let first = segment.ops.first(where: { replica.place(givenWayTo: $0) != nil })
            {
                do {
                    let gone = try replica.giveWay(to: first)
                    outcome.noteReplaced(gone)
                    if !gone.isEmpty { gaveWay[last.author, default: 0] += 1 }
                } catch {
                    archiveFaults += 1
                    games[last.gameID] = replica
                    return refused(segment.ops)
                }
            }
            replica.beginSegment()
            for op in segment.ops { replica.admit(op, room: room, outcome: &outcome) }
            if let end = replica.lastOp(of: last.author), end.signature == nil,
                let first = segment.ops.first, end.seq >= first.seq, end.seq < last.seq
            {
                // A later op of the segment was refused, so the ops accepted
                // before it end the chain without a signature: they could
                // never be relayed, nor restored after a restart (the state
                // would change). The segment goes in whole or not at all.
                let reason = outcome.rejected.first { $0.author == last.author }?.reason ?? .brokenChain
                outcome = InsertOutcome()
                for op in segment.ops { outcome.rejected.append((op.gameID, op.author, op.seq, reason)) }
                replica.endSegment(keep: false)
            } else {
                replica.endSegment(keep: true)
            }
            games[last.gameID] = replica
            settleDaily(last.gameID, &outcome)
        }
        count(outcome)
        return outcome
    }

    /// Rebuilds from stored ops (any order): each author's ops are checked
    /// as chains up to their signed ops, like segments; then the `vouched`
    /// ops, kept without a signature as they came from their authors' links
    /// (see ``insert(vouched:)``), follow on.
    @discardableResult
    public mutating func restore(_ ops: [Op], vouched: [Op] = []) -> InsertOutcome {
        var outcome = InsertOutcome()
        var byChain: [GameID: [PeerID: [Op]]] = [:]
        for op in ops { byChain[op.gameID, default: [:]][op.author, default: []].append(op) }
        // Genesis chains first, so that the others apply at once.
        let order = byChain.sorted { $0.key < $1.key }
        for (_, authors) in order {
            let sortedAuthors = authors.sorted { a, b in
                let ag = a.value.contains { $0.payload.isGenesis }
                let bg = b.value.contains { $0.payload.isGenesis }
                return ag != bg ? ag : a.key < b.key
            }
            for (_, chainOps) in sortedAuthors {
                let chain = chainOps.sorted(by: { $0.seq < $1.seq })
                let proven = Self.provenSeqs(chain)
                var run: [Op] = []
                for op in chain {
                    if let previous = run.last, op.seq != previous.seq + 1 {
                        run = []
                    }
                    run.append(op)
                    if op.signature != nil, let segment = OpSegment(verifiedOps: run) {
                        outcome.merge(insert(segment, lastOpProven: proven.contains { $0.contains(op.seq) }))
                        run = []
                    }
                }
            }
        }
        for op in vouched.sorted(by: { ($0.gameID, $0.author, $0.seq) < ($1.gameID, $1.author, $1.seq) }) {
            outcome.merge(insert(vouched: op))
        }
        return outcome
    }

    /// The seqs of one author's stored ops (sorted by seq) that a checked
    /// signature proves are the author's: in each run of consecutive seqs, the ops up to
    /// its newest signed op, when each names the hash of the one before and
    /// that op's signature is valid. One signature check then stands for the
    /// run, as in a catch-up, where a restart checked every signed op's own
    /// (one per move of this device: most of a long game's replay). A run
    /// that does not chain is left to be checked op by op, as before.
    static func provenSeqs(_ chain: [Op]) -> [ClosedRange<UInt64>] {
        var out: [ClosedRange<UInt64>] = []
        var start = 0
        while start < chain.count {
            var end = start + 1
            while end < chain.count && chain[end].seq == chain[end - 1].seq + 1 { end += 1 }
            if let newest = chain[start..<end].lastIndex(where: { $0.signature != nil }) {
                let chained = (start..<newest).allSatisfy { chain[$0 + 1].previous == chain[$0].hash && chain[$0 + 1].lamport > chain[$0].lamport }
                if chained && chain[newest].hasValidSignature { out.append(chain[start].seq...chain[newest].seq) }
            }
            start = end
        }
        return out
    }

    /// Segments that bring a peer holding `vector` of `game` up to date (a
    /// sleeping game's read back from the store, when the peer lacks any).
    public func segments(for game: GameID, after vector: VersionVector) -> [OpSegment] {
        if let held = games[game] { return held.segments(after: vector) }
        guard let asleep = sleeping[game], !vector.dominates(asleep.vector) else { return [] }
        return awakened(game)?.segments(after: vector) ?? []
    }
}
