import SweeperCrypto
import SweeperGame

/// One game as a replica holds it: each author's chain of accepted ops,
/// ops waiting for a gap or the genesis, and the derived ``GameState``.
///
/// With an ``OpArchive``, a chain's older ops leave memory once the store
/// holds them (see ``OpChain``): a game's memory is its board, a hash prefix per
/// op and its newest ops, however long its history.
public struct GameReplica: Sendable {
    /// The game.
    public let gameID: GameID
    /// The derived state, once the genesis is known and can be read (a
    /// private game's only by its players).
    public internal(set) var state: GameState?
    /// A private game's creator, players and (for a player) key, once its
    /// genesis is known; `nil` for an open game.
    public private(set) var privateHeader: PrivateGameHeader?
    /// Who reads private games here: a game's key is opened with the first
    /// of them it is sealed to (this device's player, then the players it hosts).
    let readers: [SigningIdentity]
    /// The first reader: this device's player.
    var reader: SigningIdentity? { readers.first }
    /// Accepted ops per author.
    var chains: [PeerID: OpChain] = [:]
    /// Where ops that left memory are read back; `nil` keeps every op.
    let archive: (any OpArchive)?
    /// How many of each chain's newest ops stay in memory.
    let recentOpsKept: Int
    /// The genesis op, once known.
    public internal(set) var genesisOp: Op?
    /// The authors of a reveal or a flood op (a move that uncovers cells,
    /// as sent: a private game's sealed moves aside).
    public internal(set) var revealers: Set<PeerID> = []
    /// Authors shown to have signed two different ops at one place in
    /// their chain (equivocation): the second is refused as a conflict,
    /// so replicas that got them in other orders differ. The daemon keeps
    /// them in its store and gives them back with ``noteEquivocator(_:)``.
    public private(set) var equivocators: Set<PeerID> = []
    /// Authors whose ops past ``opQuota`` were refused (shown, never relayed).
    public internal(set) var overQuota: Set<PeerID> = []
    /// Per author, the newest op held unsigned that got its signature here
    /// since the store was last told it holds that op (see ``noteStored(_:through:)``):
    /// the store keeps it unsigned until the daemon writes the signature,
    /// so the game may not sleep (it would wake without it).
    private(set) var signaturesToStore: [PeerID: UInt64] = [:]
    /// Authenticated ops waiting for their predecessor or the genesis.
    private var pending: [PeerID: [UInt64: Op]] = [:]
    /// The number of waiting ops.
    public private(set) var pendingCount = 0
    /// Their size, as their canonical encodings.
    public private(set) var pendingBytes = 0
    /// The authors with an op waiting.
    var pendingAuthors: Dictionary<PeerID, [UInt64: Op]>.Keys { pending.keys }
    /// The greatest Lamport time among accepted ops.
    public internal(set) var maxLamport: UInt64 = 0
    /// While a segment goes in (see ``beginSegment()``): what puts the game
    /// back if the segment cannot go in whole, and the accepted ops whose
    /// effect on the state waits until it has.
    private var journal: Journal?

    private struct Journal {
        var chainCounts: [PeerID: Int]
        var pending: [PeerID: [UInt64: Op]]
        var pendingCount: Int
        var pendingBytes: Int
        var maxLamport: UInt64
        var hadGenesis: Bool
        var revealers: Set<PeerID>
        var signaturesToStore: [PeerID: UInt64]
        /// Held ops whose signature the segment filled in, as they were.
        var signed: [(author: PeerID, index: Int, op: Op)] = []
        /// Accepted ops, in order, to apply to the state once the segment is in.
        var accepted: [Op] = []
    }

    init(gameID: GameID, readers: [SigningIdentity] = [], archive: (any OpArchive)? = nil, recentOpsKept: Int = Replica.defaultRecentOpsKept) {
        self.gameID = gameID
        self.readers = readers
        self.archive = archive
        self.recentOpsKept = recentOpsKept
    }

    /// The game's creator, once its genesis is known (readable or not).
    public var creator: PeerID? { state?.creator ?? privateHeader?.creator }

    /// Whether the genesis is known (readable or not).
    public var isKnown: Bool { creator != nil }

    /// Whether the game may sleep (see ``Replica/sleep(_:)``): its genesis
    /// is known, no op waits and no segment is going in, and the store holds
    /// every chain whole (ops held without a signature, as their authors'
    /// links brought them, stored so) and every signature that came for them.
    var maySleep: Bool {
        isKnown && pendingCount == 0 && journal == nil && signaturesToStore.isEmpty
            && chains.values.allSatisfy { $0.stored >= $0.count }
    }

    /// Starts taking in a segment that must go in whole or not at all.
    /// Nothing is copied: the journal keeps chain lengths, the (usually
    /// empty) waiting ops and a few counters, and the accepted ops reach the
    /// state only at ``endSegment(keep:)``. (Keeping a copy of the game
    /// instead would make every append and every applied op copy the
    /// chains and the board whole, a cost that grows with the game.)
    mutating func beginSegment() {
        journal = Journal(
            chainCounts: chains.mapValues(\.count), pending: pending, pendingCount: pendingCount, pendingBytes: pendingBytes,
            maxLamport: maxLamport,
            hadGenesis: isKnown, revealers: revealers, signaturesToStore: signaturesToStore)
    }

    /// Ends a segment: kept, its accepted ops take effect on the state in
    /// the order they were accepted; not kept, the game is put back as it
    /// was at ``beginSegment()``.
    mutating func endSegment(keep: Bool) {
        guard let j = journal else { return }
        journal = nil
        if keep {
            for op in j.accepted { applyEffect(op) }
            return
        }
        for author in Array(chains.keys) {
            guard let count = j.chainCounts[author] else {
                chains[author] = nil
                continue
            }
            let extra = (chains[author]?.count ?? 0) - count
            if extra > 0 { chains[author]?.removeLast(extra) }
        }
        for s in j.signed.reversed() { chains[s.author]?.replace(seq: UInt64(s.index + 1), with: s.op) }
        pending = j.pending
        pendingCount = j.pendingCount
        pendingBytes = j.pendingBytes
        maxLamport = j.maxLamport
        revealers = j.revealers
        signaturesToStore = j.signaturesToStore
        if !j.hadGenesis {
            state = nil
            privateHeader = nil
            genesisOp = nil
        }
    }

    /// Notes that `author` was shown to sign two ops at one place (known
    /// from an earlier run: the second op itself was refused, never kept).
    public mutating func noteEquivocator(_ author: PeerID) {
        equivocators.insert(author)
    }

    /// Admits an authenticated op (its signature, or that of a later op in
    /// its verified segment, checked; its membership proof checked).
    /// `room` is how many ops may wait here: in the game, and of the op's author.
    mutating func admit(_ op: Op, room: WaitingRoom, outcome: inout InsertOutcome) {
        // The author's chain length and last op, in one lookup (no copy of
        // the chain is kept: the append below stays in place).
        let (held, last) = chains[op.author].map { ($0.count, $0.last) } ?? (0, nil)
        if op.seq >= 1, op.seq <= UInt64(held), let same = holds(op) {
            if same {
                outcome.duplicates += 1
                // An archived op is covered by a signature already: only a held one takes this.
                if op.signature != nil, let held = chains[op.author]?.heldOp(seq: op.seq), held.signature == nil {
                    journal?.signed.append((op.author, Int(op.seq - 1), held))
                    let signedOp = held.with(signature: op.signature)
                    chains[op.author]?.replace(seq: op.seq, with: signedOp)
                    outcome.signed.append(signedOp)
                    signaturesToStore[op.author] = max(signaturesToStore[op.author] ?? 0, op.seq)
                }
            } else {
                equivocators.insert(op.author)
                reject(op, .conflictingOp, &outcome)
            }
            return
        }
        if op.seq > opQuota {
            overQuota.insert(op.author)
            reject(op, .overQuota, &outcome)
            return
        }
        switch op.payload {
        case .genesis(let g):
            admitGenesis(op, g, &outcome)
            return
        case .privateGenesis(let g):
            admitPrivateGenesis(op, g, &outcome)
            return
        default:
            break
        }
        // The common case, a segment or a push in order: the op follows its
        // chain at once, without a stay in the waiting list (what `drain`
        // would do with it, the same checks), and takes no room there, so
        // a full waiting list holds up no move that follows on.
        if follows(op) {
            if follow(op, after: last, &outcome) { drain(op.author, &outcome) } else { dropWaiting(after: op, &outcome) }
            return
        }
        if let waiting = pending[op.author]?[op.seq] {
            if waiting.hash == op.hash {
                outcome.duplicates += 1
            } else {
                equivocators.insert(op.author)
                reject(op, .conflictingOp, &outcome)
            }
            return
        }
        let size = op.canonicalBytes.count
        guard pendingCount < room.game, pending[op.author, default: [:]].count < room.author, pendingBytes + size <= room.bytes else {
            reject(op, .pendingLimit, &outcome)
            return
        }
        pending[op.author, default: [:]][op.seq] = op
        pendingCount += 1
        pendingBytes += size
        let before = outcome.accepted.count
        drain(op.author, &outcome)
        if pending[op.author]?[op.seq] != nil, outcome.accepted.count == before { outcome.waiting += 1 }
    }

    private mutating func admitGenesis(_ op: Op, _ g: Genesis, _ outcome: inout InsertOutcome) {
        guard admitsGenesis(op, id: g.gameID(creator: op.author), &outcome) else { return }
        state = GameState(genesisOp: op, genesis: g)
        acceptGenesis(op, &outcome)
    }

    private mutating func admitPrivateGenesis(_ op: Op, _ g: PrivateGenesis, _ outcome: inout InsertOutcome) {
        guard admitsGenesis(op, id: g.gameID(creator: op.author), &outcome) else { return }
        privateHeader = Self.header(of: op, g, readers: readers)
        state = readableState(genesisOp: op)
        acceptGenesis(op, &outcome)
    }

    /// A private game's state from its genesis op, when the header holds
    /// the key and the genesis opens (else the game stays unread here).
    private func readableState(genesisOp: Op) -> GameState? {
        guard let header = privateHeader, let key = header.key, case .privateGenesis(let g) = genesisOp.payload,
            let genesis = g.open(with: key, creator: header.creator)
        else { return nil }
        var s = GameState(genesisOp: genesisOp, genesis: genesis)
        s.isPrivate = true
        return s
    }

    /// Whether `op` may be the game's genesis (id `id`); refuses it if not.
    private mutating func admitsGenesis(_ op: Op, id: GameID, _ outcome: inout InsertOutcome) -> Bool {
        guard !isKnown, op.seq == 1, op.previous == .none, id == gameID else {
            reject(op, .invalidGenesis, &outcome)
            return false
        }
        guard op.lamportFits(holding: 0) else {
            reject(op, .lamportOutOfRange, &outcome)
            return false
        }
        return true
    }

    /// Takes a genesis in: it starts its creator's chain, and the ops that waited for it follow.
    private mutating func acceptGenesis(_ op: Op, _ outcome: inout InsertOutcome) {
        // A waiting op that claims the creator's seq 1 is now known to be a fake.
        if let fake = pending[op.author]?.removeValue(forKey: 1) {
            stopsWaiting([fake])
            reject(fake, .invalidGenesis, &outcome)
        }
        var chain = OpChain()
        chain.append(op)
        chains[op.author] = chain
        genesisOp = op
        maxLamport = max(maxLamport, op.lamport)
        outcome.accepted.append(op)
        for author in pending.keys.sorted() { drain(author, &outcome) }
    }

    /// Moves waiting ops of `author` into the chain while they follow on.
    private mutating func drain(_ author: PeerID, _ outcome: inout InsertOutcome) {
        guard isKnown else { return }
        while true {
            // Read the count and last op without holding the array, so the
            // append below stays in place instead of copying the chain.
            let next = UInt64(chains[author]?.count ?? 0) + 1
            let previous = chains[author]?.last
            guard let op = pending[author]?.removeValue(forKey: next) else { break }
            stopsWaiting([op])
            if pending[author]?.isEmpty == true { pending[author] = nil }
            guard follow(op, after: previous, &outcome) else {
                dropWaiting(after: op, &outcome)
                break
            }
        }
    }

    /// Refuses every op of `refused`'s author that waits: none can follow on now.
    private mutating func dropWaiting(after refused: Op, _ outcome: inout InsertOutcome) {
        guard let rest = pending.removeValue(forKey: refused.author) else { return }
        stopsWaiting(rest.values)
        for (_, o) in rest.sorted(by: { $0.key < $1.key }) { reject(o, .brokenChain, &outcome) }
    }

    /// Counts `ops` as no longer waiting.
    private mutating func stopsWaiting(_ ops: some Collection<Op>) {
        pendingCount -= ops.count
        for op in ops { pendingBytes -= op.canonicalBytes.count }
    }

    /// How many ops may wait in a game for their predecessors or its
    /// genesis, as ``Replica`` shares its ``Replica/pendingLimit`` out.
    struct WaitingRoom {
        /// In the game, from every author.
        var game: Int
        /// In the game, from the op's author.
        var author: Int
        /// Their bytes in the game (``pendingBytes``), from every author.
        var bytes: Int

        /// No bound: for an op that follows on, which waits nowhere.
        static let unbounded = WaitingRoom(game: .max, author: .max, bytes: .max)
    }

    /// Whether `op` follows its author's chain here at once: the genesis
    /// is held and it is the place after the author's newest op.
    func follows(_ op: Op) -> Bool { isKnown && op.seq == chainLength(of: op.author) + 1 }

    /// How many of `author`'s ops wait here.
    func waitingCount(of author: PeerID) -> Int { pending[author]?.count ?? 0 }

    /// Appends `op` to its author's chain, after `previous` (its last op),
    /// and applies it, when it may follow; refuses it otherwise. Returns
    /// whether it was accepted.
    @discardableResult
    private mutating func follow(_ op: Op, after previous: Op?, _ outcome: inout InsertOutcome) -> Bool {
        if let why = problem(with: op, after: previous) {
            reject(op, why, &outcome)
            return false
        }
        chains[op.author, default: OpChain()].append(op)
        maxLamport = max(maxLamport, op.lamport)
        if Self.uncoversCells(op) { revealers.insert(op.author) }
        if journal != nil {
            journal?.accepted.append(op)
        } else {
            applyEffect(op)
        }
        outcome.accepted.append(op)
        return true
    }

    /// Whether `op` is a reveal or a flood (as sent: a sealed move is neither).
    static func uncoversCells(_ op: Op) -> Bool {
        switch op.payload {
        case .reveal, .flood: true
        default: false
        }
    }

    /// Why `op` cannot follow `previous` in its author's chain, if it cannot.
    private func problem(with op: Op, after previous: Op?) -> OpRejection? {
        guard let creator else { return .brokenChain }
        switch op.payload {
        case .genesis, .privateGenesis: return .invalidGenesis
        default: break
        }
        if let previous {
            guard op.previous == previous.hash, op.lamport > previous.lamport else { return .brokenChain }
        } else {
            guard op.previous == .none else { return .brokenChain }
            // The creator's first op is the genesis and nothing else.
            if op.author == creator { return .invalidGenesis }
        }
        if let header = privateHeader {
            // Read or not, a private game takes sealed moves of its players
            // and its creator's players ops; what a sealed op holds is
            // checked by the players who open it (see `applyEffect`).
            guard op.lamportFits(holding: maxLamport) else { return .lamportOutOfRange }
            switch op.payload {
            case .sealed: return header.players.contains(op.author) ? nil : .notPlayer
            case .privatePlayers: return op.author == creator ? nil : .notPlayer
            default: return .notPlayer
            }
        }
        guard let state else { return .brokenChain }
        guard op.payload.cellUpperBound <= state.genesis.geometry.cellCount else { return .cellOutOfRange }
        guard op.lamportFits(holding: maxLamport) else { return .lamportOutOfRange }
        switch op.payload {
        case .sealed, .privatePlayers: return .notPlayer
        default:
            if state.allows(op) { return nil }
            return state.isDaily && op.author != creator ? .dailyOfAnother : .notPlayer
        }
    }

    /// What `op` does, as this device can read it: its payload, or for a
    /// sealed move of a private game what the seal holds (`nil` when this
    /// device cannot open it).
    public func readablePayload(of op: Op) -> OpPayload? {
        guard case .sealed(let box) = op.payload else { return op.payload }
        guard let header = privateHeader, let cells = state?.genesis.geometry.cellCount else { return nil }
        return header.opened(box, cellCount: cells)
    }

    /// Applies an accepted op to the state: in a private game its players
    /// op to the header (a player it adds opens its key and reads the game
    /// from then on), a sealed op's contents when they open.
    private mutating func applyEffect(_ op: Op) {
        guard var header = privateHeader else {
            state?.apply(op)
            return
        }
        switch op.payload {
        case .privatePlayers(let added):
            header.players.formUnion(added.map(\.player))
            if header.key == nil, let opened = Self.key(in: added, for: readers) {
                header.key = opened
                privateHeader = header
                if header.key != nil { readFromTheStart() }
                return
            }
            privateHeader = header
            state?.apply(op)
        case .sealed(let box):
            guard let cells = state?.genesis.geometry.cellCount, let payload = header.opened(box, cellCount: cells),
                state?.allows(payload, by: op.author) == true
            else { return }
            state?.apply(payload, of: op)
        default:
            break
        }
    }

    /// Derives a private game's state from every accepted op, once its key
    /// is known (the ops before it arrived included).
    private mutating func readFromTheStart() {
        guard let genesisOp else { return }
        state = readableState(genesisOp: genesisOp)
        guard state != nil else { return }
        // Nothing of a game this device could not read left memory (see ``noteStored(_:through:)``).
        for op in (try? allOps()) ?? [] where op.hash != genesisOp.hash { applyEffect(op) }
    }

    private func reject(_ op: Op, _ why: OpRejection, _ outcome: inout InsertOutcome) {
        outcome.rejected.append((op.gameID, op.author, op.seq, why))
    }

    /// Drops `author`'s ops after the first `kept` (accepted or waiting)
    /// and derives the state again from the rest (the state is a function
    /// of the set of ops, so their order does not matter). Returns the
    /// accepted ops dropped. Throws, changing nothing, when ops that left
    /// memory cannot be read back.
    mutating func truncate(_ author: PeerID, keeping kept: UInt64) throws -> [Op] {
        guard let chain = chains[author], UInt64(chain.count) > kept else {
            dropWaiting(of: author, after: kept)
            return []
        }
        // Read everything first: a failed read leaves the game as it was.
        let dropped = try ops(of: author, after: kept)
        var truncated = chain
        try truncated.truncate(to: Int(kept), game: gameID, author: author, archive: archive)
        var rest: [Op] = []
        if let creator {
            for a in [creator] + authors.filter({ $0 != creator }) {
                rest += a == author ? truncated.held : try ops(of: a, after: 0)
            }
        }
        dropWaiting(of: author, after: kept)
        chains[author] = kept == 0 ? nil : truncated
        // Lamport times grow along a chain: each chain's newest op holds its greatest.
        maxLamport = chains.values.compactMap { $0.last?.lamport }.max() ?? 0
        revealers = Set(rest.filter(Self.uncoversCells).map(\.author))
        guard let creator, chains[creator] != nil, let genesisOp else {
            // The genesis itself went: nothing of the game is shown until one comes that may stay.
            state = nil
            privateHeader = nil
            genesisOp = nil
            return dropped
        }
        switch genesisOp.payload {
        case .genesis(let g):
            var rebuilt = GameState(genesisOp: genesisOp, genesis: g)
            for op in rest where op.hash != genesisOp.hash { rebuilt.apply(op) }
            state = rebuilt
        case .privateGenesis(let g):
            // As the ops first went in: players ops add players, and the one
            // that gives this reader the key makes the game read from its start.
            privateHeader = Self.header(of: genesisOp, g, readers: readers)
            state = readableState(genesisOp: genesisOp)
            for op in rest where op.hash != genesisOp.hash { applyEffect(op) }
        default:
            state = nil
            privateHeader = nil
        }
        return dropped
    }

    /// Lets the ops of `op`'s author from `op`'s place on give way to it
    /// when the op held there (or the one before it, which `op` names by
    /// hash) is a different one that no signature covers (held on its
    /// author's link's word; see ``InsertOutcome/replaced``):
    /// `op` carries the author's proof, which the caller checked. Returns
    /// the ops dropped; none when the place is not held, holds `op`, or a
    /// signature covers what it holds (two signed ops at one place are
    /// still a conflict). Throws, changing nothing, when ops that left
    /// memory cannot be read back.
    mutating func giveWay(to op: Op) throws -> [Op] {
        switch place(givenWayTo: op) {
        case nil:
            return []
        case .waiting:
            // Held back (after a gap, or before the genesis), never applied: let go of, with the author's later ones.
            dropWaiting(of: op.author, after: op.seq - 1, unsignedOnly: true)
            return []
        case .held(let kept):
            return try truncate(op.author, keeping: kept)
        }
    }

    /// Where `op`'s author's ops would give way to it (``giveWay(to:)``):
    /// a different op waiting unsigned at its place; a different op held
    /// unsigned there (keeping the ops before it); or a different op held
    /// unsigned before it, which `op` names by hash (keeping the ops before
    /// that one: `op` then waits for the author's own, as after any gap).
    /// `nil` when nothing gives way.
    func place(givenWayTo op: Op) -> GivenWayPlace? {
        guard op.seq >= 1 else { return nil }
        if let waiting = pending[op.author]?[op.seq], waiting.signature == nil, waiting.hash != op.hash { return .waiting }
        if isUnsigned(author: op.author, seq: op.seq), holds(op) == false { return .held(keeping: op.seq - 1) }
        if op.seq >= 2, isUnsigned(author: op.author, seq: op.seq - 1), let before = self.op(author: op.author, seq: op.seq - 1),
            before.hash != op.previous
        {
            return .held(keeping: op.seq - 2)
        }
        return nil
    }

    /// Where ops give way (``place(givenWayTo:)``).
    enum GivenWayPlace {
        /// Ops that wait, never applied.
        case waiting
        /// Held ops after the first `keeping`.
        case held(keeping: UInt64)
    }

    /// Whether `author`'s op `seq` waits here (after a gap, or before the genesis).
    func waits(author: PeerID, seq: UInt64) -> Bool { pending[author]?[seq] != nil }

    /// Drops `author`'s waiting ops after `kept` (only those that came
    /// without a signature, with `unsignedOnly`).
    mutating func dropWaiting(of author: PeerID, after kept: UInt64, unsignedOnly: Bool = false) {
        guard let waiting = pending[author] else { return }
        let late = waiting.filter { $0.key > kept && (!unsignedOnly || $0.value.signature == nil) }
        for seq in late.keys { pending[author]?[seq] = nil }
        stopsWaiting(late.values)
        if pending[author]?.isEmpty == true { pending[author] = nil }
    }

    /// Notes that the store holds `author`'s first `seq` ops: with an
    /// archive, the chain lets go of those a signature covers (its newest
    /// ops aside). A game this device cannot read keeps every op, for the
    /// day a players op gives it the key and it reads the game from its
    /// start.
    public mutating func noteStored(_ author: PeerID, through seq: UInt64) {
        guard journal == nil else { return }
        if let signed = signaturesToStore[author], signed <= seq { signaturesToStore[author] = nil }
        let archiving = archive != nil && state != nil
        let recent = recentOpsKept
        chains[author]?.noteStored(through: Int(clamping: seq), archiving: archiving, keepingRecent: recent)
    }

    /// Attaches `signature` to `author`'s held op `seq` when it is the
    /// author's signature of it: the op, and every op before it in the
    /// chain, is then vouched for like a segment's. Returns the op signed
    /// now, `nil` when it was signed already or is not held; throws when
    /// the signature is not the author's of the op held.
    mutating func attach(_ signature: Signature, author: PeerID, seq: UInt64) throws(HeadMismatch) -> Op? {
        guard let held = op(author: author, seq: seq) else { return nil }
        guard author.isValidSignature(signature, of: Op.signatureDomain + held.canonicalBytes) else { throw HeadMismatch() }
        // An archived op is covered by a later signature already.
        guard held.signature == nil, chains[author]?.heldOp(seq: seq) != nil else { return nil }
        let signedOp = held.with(signature: signature)
        chains[author]?.replace(seq: seq, with: signedOp)
        signaturesToStore[author] = max(signaturesToStore[author] ?? 0, seq)
        return signedOp
    }

}
