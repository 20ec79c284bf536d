import SweeperConventions
import SweeperCrypto
import SweeperGame

/// The replicated state of one game: a pure function of its accepted ops.
///
/// Every rule is order-free, so applying the same ops in any order, any
/// number of times, gives the same state (and ``digest``):
/// revealed cells are a union; each cell's mark is the value of the op with
/// the greatest (Lamport, author) stamp; each cell's first revealer is the
/// reveal with the smallest stamp (the opening belongs to the genesis).
public struct GameState: Sendable {
    /// The game.
    public let gameID: GameID
    /// Who created it.
    public let creator: PeerID
    /// The genesis.
    public let genesis: Genesis
    /// The genesis op's stamp; the opening's cells carry it.
    public let genesisStamp: Stamp
    /// The genesis op's wall clock.
    let genesisWall: UInt64

    /// The play view: revealed cells and each covered cell's winning mark.
    /// Build moves against it with `cellsUncovered(by:)` and `cellsChorded(by:)`.
    public internal(set) var board: Board

    /// Each reveal that opened cells first, as a stamp and wall clock:
    /// entry 0 is the genesis (the opening's cells), the others one per
    /// reveal, chord or flood op that opened a cell first or took one over.
    var revealStamps = ChunkedArray<RevealStamp>()
    /// The first reveal of each revealed cell not opened by the genesis, as
    /// an index into ``revealStamps``: the board says which cells are
    /// revealed, and a revealed cell missing here is the opening's. Only
    /// cells opened by moves take room, so a 500×500 game just begun holds
    /// its board and layout alone (about 160 KB), not 30 bytes a cell; one
    /// played through, 4 bytes a cell (see ``CellEntries``).
    var firstReveals: CellEntries
    /// The mark register of each cell ever marked: the op with the greatest stamp.
    var markRegisters: [Int32: MarkRegister] = [:]

    /// The stamp and wall clock of a reveal, in 20 bytes (32-bit words:
    /// 64-bit ones would pad it to 24, and a long game holds one a reveal).
    struct RevealStamp {
        private let lamportWords: (UInt32, UInt32)
        private let wallWords: (UInt32, UInt32)
        let author: Int32

        init(lamport: UInt64, author: Int32, wall: UInt64) {
            lamportWords = (UInt32(truncatingIfNeeded: lamport >> 32), UInt32(truncatingIfNeeded: lamport))
            wallWords = (UInt32(truncatingIfNeeded: wall >> 32), UInt32(truncatingIfNeeded: wall))
            self.author = author
        }

        var lamport: UInt64 { UInt64(lamportWords.0) << 32 | UInt64(lamportWords.1) }
        var wall: UInt64 { UInt64(wallWords.0) << 32 | UInt64(wallWords.1) }
    }

    /// A cell's mark register: the stamp of the mark op that holds it (the
    /// board holds its value), in 12 bytes.
    struct MarkRegister {
        private let lamportWords: (UInt32, UInt32)
        let author: Int32

        init(lamport: UInt64, author: Int32) {
            lamportWords = (UInt32(truncatingIfNeeded: lamport >> 32), UInt32(truncatingIfNeeded: lamport))
            self.author = author
        }

        var lamport: UInt64 { UInt64(lamportWords.0) << 32 | UInt64(lamportWords.1) }
    }
    /// Authors seen, indexed by the numbers stored per cell.
    var authors: [PeerID] = []
    /// The author of the op applied last, as its number (a cache).
    var lastAuthor: Int32 = -1
    var authorIndex: [PeerID: Int32] = [:]
    /// Who peeked at the mines, if anyone.
    public internal(set) var assistedBy: Set<PeerID> = []
    /// When each of them first looked at the mines: the wall clock of
    /// their assist op with the smallest stamp (ms since 1970).
    public internal(set) var peeks: [PeerID: UInt64] = [:]
    var peekStamps: [PeerID: Stamp] = [:]
    /// How many hints each player asked for (hint ops, peer protocol 12).
    public internal(set) var hintsBy: [PeerID: Int] = [:]
    /// Whether the creator chose the seed (a seeded op, peer protocol 12):
    /// a practice game, kept out of records.
    public internal(set) var isSeeded = false
    /// Whether a hint or seeded op was applied: peers before hello
    /// version 12 cannot read the game.
    public internal(set) var usesHints = false
    /// The day the creator says this game is the board of (a daily op,
    /// peer protocol 13; the one with the smallest stamp), if any. Whether
    /// the layout is that day's is for ``DailyBoard`` to say.
    public internal(set) var dailyDay: Int?
    var dailyStamp: Stamp?
    /// Whether a daily op was applied: peers before hello version 13 cannot read the game.
    public internal(set) var usesDaily = false
    /// Who may move, when the creator chose: the creator, the genesis's
    /// players and every player added since; `nil` when every member may.
    public internal(set) var players: Set<PeerID>?
    /// The archive op with the greatest stamp, if any: its value says
    /// whether the game is hidden from lists.
    var archiveRegister: (stamp: Stamp, archived: Bool)?
    /// Whether an op of a kind that only peers of hello version 7 or later
    /// read was applied (the genesis's player list included).
    public internal(set) var usesRoles: Bool
    /// Whether a flood op was applied: peers before hello version 8 cannot read the game.
    public internal(set) var usesFloods = false
    /// Whether the game is private: its ops are sealed with a key only
    /// its players hold.
    public internal(set) var isPrivate = false
    /// In a race, each racer's board, by racer: a state of its own,
    /// changed by that racer's moves alone. `nil` for a game played together.
    var lanes: [PeerID: GameState]?
    /// On a racer's board: the wall clock of the racer's resign op, once
    /// it gave up (its part ends lost; later moves change nothing).
    public internal(set) var gaveUpMillis: UInt64?

    /// The state right after `genesisOp` (which must carry a genesis).
    init(genesisOp: Op, genesis: Genesis) {
        self.init(genesisOp: genesisOp, genesis: genesis, isLane: false)
    }

    /// The state right after `genesisOp`; `isLane` for one racer's board in a race.
    init(genesisOp: Op, genesis: Genesis, isLane: Bool) {
        gameID = genesisOp.gameID
        creator = genesisOp.author
        self.genesis = genesis
        genesisStamp = genesisOp.stamp
        genesisWall = genesisOp.wallClockMillis
        players = genesis.players.map { $0.union([genesisOp.author]) }
        usesRoles = genesis.players != nil
        board = Board(layout: genesis.layout, start: genesis.startIndex, questionMarks: genesis.questionMarks)
        firstReveals = CellEntries(cellCount: genesis.geometry.cellCount)
        let a = index(of: genesisOp.author)
        revealStamps.append(RevealStamp(lamport: genesisOp.lamport, author: a, wall: genesis.createdAtMillis))
        if genesis.isRace, !isLane, let racers = players {
            let lane = GameState(genesisOp: genesisOp, genesis: genesis, isLane: true)
            lanes = Dictionary(uniqueKeysWithValues: racers.map { ($0, lane) })
        }
    }

    private mutating func index(of author: PeerID) -> Int32 {
        // Ops come in runs of one author (a chain segment): the last one
        // found is checked first, by its bytes, without hashing the key.
        if lastAuthor >= 0, Int(lastAuthor) < authors.count, authors[Int(lastAuthor)] == author { return lastAuthor }
        if let i = authorIndex[author] {
            lastAuthor = i
            return i
        }
        let i = Int32(authors.count)
        authors.append(author)
        authorIndex[author] = i
        lastAuthor = i
        return i
    }

    /// Whether stamp (l1, a1) comes before (l2, a2).
    private func precedes(_ l1: UInt64, _ a1: Int32, _ l2: UInt64, _ a2: Int32) -> Bool {
        if l1 != l2 { return l1 < l2 }
        if a1 == a2 { return false }
        return authors[Int(a1)] < authors[Int(a2)]
    }

    /// Applies an accepted, validated op (cells already checked against the board).
    /// Returns the cells whose view changed.
    @discardableResult
    mutating func apply(_ op: Op) -> [Int] {
        apply(op.payload, of: op)
    }

    /// Applies `payload` as made by `op` (its author, Lamport time and wall
    /// clock): the op's own payload, or what a sealed op holds.
    @discardableResult
    mutating func apply(_ payload: OpPayload, of op: Op) -> [Int] {
        if let racers = lanes?.keys {
            // A practice race is practice on every racer's board.
            if case .seeded = payload { for racer in Array(racers) { lanes?[racer]?.apply(payload, of: op) } }
            switch payload {
            case .reveal, .flood, .mark, .assisted, .hint, .resign:
                // A racer's move changes its own board alone.
                if case .flood = payload { usesFloods = true }
                if case .hint = payload { usesHints = true }
                return lanes?[op.author]?.apply(payload, of: op) ?? []
            default:
                break
            }
        } else if gaveUpMillis != nil {
            // A racer who gave up moves no more.
            return []
        }
        let a = index(of: op.author)
        switch payload {
        case .genesis:
            return []
        case .reveal(let runs):
            return reveal(runs, by: op, author: a)
        case .flood(let flood):
            usesFloods = true
            return reveal(flood.cells(in: genesis.layout), by: op, author: a)
        case .mark(let cell, let mark):
            let key = Int32(cell)
            if let held = markRegisters[key], !precedes(held.lamport, held.author, op.lamport, a) { return [] }
            markRegisters[key] = MarkRegister(lamport: op.lamport, author: a)
            return board.setMark(cell, mark) ? [cell] : []
        case .assisted:
            assistedBy.insert(op.author)
            if peekStamps[op.author].map({ op.stamp < $0 }) ?? true {
                peekStamps[op.author] = op.stamp
                peeks[op.author] = op.wallClockMillis
            }
            return []
        case .hint:
            usesHints = true
            hintsBy[op.author, default: 0] += 1
            return []
        case .seeded:
            usesHints = true
            isSeeded = true
            return []
        case .daily(let day):
            usesDaily = true
            if dailyStamp.map({ op.stamp < $0 }) ?? true {
                dailyStamp = op.stamp
                dailyDay = day
            }
            return []
        case .players(let added):
            addPlayers(added)
            return []
        case .privatePlayers(let added):
            addPlayers(Set(added.map(\.player)))
            return []
        case .privateGenesis, .sealed:
            // Opened by the replica, which applies what a sealed op holds.
            return []
        case .archive(let archived):
            usesRoles = true
            if archiveRegister.map({ $0.stamp < op.stamp }) ?? true { archiveRegister = (op.stamp, archived) }
            return []
        case .resign:
            // Only on a racer's board (a race's own state hands it there).
            guard board.status == .playing else { return [] }
            gaveUpMillis = op.wallClockMillis
            return []
        }
    }

    /// Reveals `cells` as `op` did: each covered cell opens with its
    /// stamp, and a cell opened before by a later stamp takes this one.
    private mutating func reveal(_ cells: some Sequence<Int>, by op: Op, author a: Int32) -> [Int] {
        var newly: [Int] = []
        // This op's entry, added when it opens or takes over its first cell.
        var entry: UInt32?
        func entryIndex() -> UInt32 {
            if let entry { return entry }
            let i = UInt32(revealStamps.count)
            revealStamps.append(RevealStamp(lamport: op.lamport, author: a, wall: op.wallClockMillis))
            entry = i
            return i
        }
        for c in cells {
            if !board.isRevealed(c) {
                firstReveals[Int32(c)] = entryIndex()
                newly.append(c)
            } else {
                let held = revealStamps[Int(firstReveals[Int32(c)] ?? 0)]
                if precedes(op.lamport, a, held.lamport, held.author) { firstReveals[Int32(c)] = entryIndex() }
            }
        }
        return board.reveal(cells: newly)
    }

    /// The first reveal of a revealed cell (the genesis's for the opening).
    private func firstReveal(of cell: Int) -> RevealStamp {
        revealStamps[Int(firstReveals[Int32(cell)] ?? 0)]
    }

    /// Lets `added` move (a game whose creator chose the players).
    mutating func addPlayers(_ added: Set<PeerID>) {
        usesRoles = true
        players?.formUnion(added)
    }

    /// Whether `op`'s author may make it in this game: every member may
    /// move unless the creator chose the players; then only they may, and
    /// only the creator adds players (in a game that has a list).
    func allows(_ op: Op) -> Bool { allows(op.payload, by: op.author) }

    /// Whether `author` may make an op of `payload` (what a sealed op
    /// holds is checked so too when it opens): only the creator adds
    /// players or says it chose the seed.
    func allows(_ payload: OpPayload, by author: PeerID) -> Bool {
        switch payload {
        case .players:
            // A race's racers are its genesis's: none join later.
            return author == creator && players != nil && lanes == nil
        case .seeded, .daily:
            return author == creator
        case .resign:
            return lanes?[author] != nil && mayMove(author)
        default:
            return mayMove(author)
        }
    }

    /// Whether `peer` may move in this game (false for a spectator): in a
    /// board of the day (a daily op of its creator is in) the creator alone,
    /// whoever else the genesis lists.
    public func mayMove(_ peer: PeerID) -> Bool {
        if isDaily { return peer == creator }
        return players?.contains(peer) ?? true
    }

    /// Whether the creator said this game is its board of a day (its daily
    /// op is in): a one-player game, whose every op is the creator's.
    public var isDaily: Bool { dailyDay != nil }

    /// Whether the game is hidden from lists (the last archive op said so).
    public var isArchived: Bool { archiveRegister?.archived ?? false }

    // MARK: Derived

    /// Playing, won (every safe cell revealed) or lost (a mine revealed,
    /// or on a racer's board, the racer gave up). A race plays until every
    /// racer's board ended, and is won when any racer won.
    public var status: GameStatus {
        if let lanes {
            var won = false
            for lane in lanes.values {
                switch lane.status {
                case .playing: return .playing
                case .won: won = true
                case .lost: break
                }
            }
            return won ? .won : .lost
        }
        if board.status == .playing, gaveUpMillis != nil { return .lost }
        return board.status
    }

    // MARK: Races

    /// Whether the game is a race (``Genesis/isRace``).
    public var isRace: Bool { lanes != nil }

    /// A race's racers (the creator and its players), in key order; empty
    /// for a game played together.
    public var racers: [PeerID] { lanes?.keys.sorted() ?? [] }

    /// A racer's own board in a race, as a state of its own (its status,
    /// board, scores and end are that racer's); `nil` when `racer` does not race here.
    public func lane(of racer: PeerID) -> GameState? { lanes?[racer] }

    /// Whose board `peer` plays or watches in a race: its own, or a
    /// spectator's (or anyone's who races not) the creator's; `nil` in a
    /// game played together.
    public func racerShown(to peer: PeerID) -> PeerID? {
        guard let lanes else { return nil }
        return lanes[peer] != nil ? peer : creator
    }

    /// What `peer` plays or watches: in a race the board of
    /// ``racerShown(to:)``; in a game played together the game itself.
    public func shown(to peer: PeerID) -> GameState {
        racerShown(to: peer).flatMap { lanes?[$0] } ?? self
    }

    /// The racer who won a race: of those who cleared their board, the
    /// first by its end's wall clock (each racer's clock is its own
    /// device's), then by key. `nil` while nobody won, and outside a race.
    public var raceWinner: PeerID? {
        guard let lanes else { return nil }
        return lanes.compactMap { racer, lane -> (UInt64, PeerID)? in
            guard lane.status == .won, let end = lane.endMillis else { return nil }
            return (end, racer)
        }.min { $0 < $1 }?.1
    }

    /// Whether anyone looked at the mines or asked for a hint in this game.
    /// In a race, whether any racer did.
    public var isAssisted: Bool {
        if let lanes { return lanes.values.contains { $0.isAssisted } }
        return !assistedBy.isEmpty || !hintsBy.isEmpty
    }

    /// Who first revealed `cell` (the smallest stamp), or `nil` when covered.
    /// The opening's cells belong to the creator.
    public func firstRevealer(of cell: Int) -> PeerID? {
        guard cell >= 0, cell < genesis.geometry.cellCount, board.isRevealed(cell) else { return nil }
        return authors[Int(firstReveal(of: cell).author)]
    }

    /// Who set `cell`'s standing mark (the mark op with the greatest
    /// stamp), or `nil` when no mark op named it.
    public func markAuthor(of cell: Int) -> PeerID? {
        markRegisters[Int32(truncatingIfNeeded: cell)].map { authors[Int($0.author)] }
    }

    /// The stamp of `cell`'s first reveal, or `nil` when covered.
    public func firstRevealStamp(of cell: Int) -> Stamp? {
        guard let who = firstRevealer(of: cell) else { return nil }
        return Stamp(lamport: firstReveal(of: cell).lamport, author: who)
    }

    /// Each player's score: the safe cells they revealed first, the figure
    /// an ending calls their cells. The opening scores for nobody.
    public var scores: [PeerID: Int] { points(byNumber: false) }

    /// Per player, 1 for each safe cell revealed first (the genesis's stamp is its alone);
    /// with `byNumber` (what the digest hashes, as every release did) 1 for a zero, N for N.
    func points(byNumber: Bool) -> [PeerID: Int] {
        if let lanes {
            // Each racer's points on its own board.
            var out: [PeerID: Int] = [:]
            for (racer, lane) in lanes { if let s = lane.points(byNumber: byNumber)[racer] { out[racer] = s } }
            return out
        }
        var totals = [Int](repeating: 0, count: authors.count)
        let layout = genesis.layout
        firstReveals.forEach { cell, entry in
            guard entry != 0, !layout.isMine(Int(cell)) else { return }
            totals[Int(revealStamps[Int(entry)].author)] += byNumber ? max(1, layout.adjacentMines(Int(cell))) : 1
        }
        var out: [PeerID: Int] = [:]
        for (i, t) in totals.enumerated() where t > 0 { out[authors[i]] = t }
        return out
    }

    /// The revealed mine with the smallest first-reveal stamp, if any.
    private var trippingCell: Int? {
        // Only a lost game has a revealed mine: no scan of the board while playing.
        guard board.status == .lost else { return nil }
        var best: (cell: Int, stamp: RevealStamp)?
        let layout = genesis.layout
        // The opening has no mine: every revealed mine was opened by an op.
        firstReveals.forEach { cell, entry in
            guard layout.isMine(Int(cell)) else { return }
            let stamp = revealStamps[Int(entry)]
            if let b = best {
                if precedes(stamp.lamport, stamp.author, b.stamp.lamport, b.stamp.author)
                    || (!precedes(b.stamp.lamport, b.stamp.author, stamp.lamport, stamp.author) && Int(cell) < b.cell)
                {
                    best = (Int(cell), stamp)
                }
            } else {
                best = (Int(cell), stamp)
            }
        }
        return best?.cell
    }

    /// The mine that went off (the earliest revealed mine by stamp), if any.
    public var trippedMine: Int? { trippingCell }

    /// Who revealed the mine that went off, if anyone did.
    public var trippedBy: PeerID? { trippingCell.map { authors[Int(firstReveal(of: $0).author)] } }

    /// When the game started: the genesis creation time (ms since 1970).
    public var startMillis: UInt64 { genesis.createdAtMillis }

    /// When the game ended, if it did: for a loss the wall clock of the op
    /// that tripped the mine (or, on a racer's board, of its resign op);
    /// for a win, that of the op whose first reveal comes last by stamp. A
    /// race ends when its last racer's board does.
    public var endMillis: UInt64? {
        if let lanes {
            guard status != .playing else { return nil }
            return lanes.values.compactMap(\.endMillis).max()
        }
        if board.status == .playing, let gaveUp = gaveUpMillis { return gaveUp }
        switch status {
        case .playing:
            return nil
        case .lost:
            return trippingCell.map { firstReveal(of: $0).wall }
        case .won:
            // The latest first reveal of a safe cell: among the moves', and
            // the genesis's when the opening still holds a safe cell.
            var last: RevealStamp?
            var byMoves = 0
            let layout = genesis.layout
            firstReveals.forEach { cell, entry in
                guard !layout.isMine(Int(cell)) else { return }
                byMoves += 1
                let stamp = revealStamps[Int(entry)]
                if let l = last {
                    if precedes(l.lamport, l.author, stamp.lamport, stamp.author) { last = stamp }
                } else {
                    last = stamp
                }
            }
            if byMoves < layout.safeCellCount {
                let opening = revealStamps[0]
                if let l = last {
                    if precedes(l.lamport, l.author, opening.lamport, opening.author) { last = opening }
                } else {
                    last = opening
                }
            }
            return last?.wall
        }
    }

    /// BLAKE2b-256 over a canonical encoding of everything derived: status,
    /// revealed cells with their first revealer and Lamport time, marks on
    /// covered cells, scores, who tripped the mine, start and end time, and
    /// the assist. Two replicas with the same ops have the same digest.
    public var digest: [UInt8] {
        var w = ByteWriter(capacity: 1024)
        w.append(Array("sweeper/state/v1\0".utf8))
        w.append(gameID.bytes)
        let sorted = authors.sorted()
        var rank: [Int32] = [Int32](repeating: 0, count: authors.count)
        for (i, a) in authors.enumerated() {
            rank[i] = Int32(sorted.firstIndex(of: a) ?? 0)
        }
        w.varint(sorted.count)
        for a in sorted { w.append(a.bytes) }
        switch status {
        case .playing: w.byte(0)
        case .won: w.byte(1)
        case .lost: w.byte(2)
        }
        let n = genesis.geometry.cellCount
        for c in 0..<n {
            if board.isRevealed(c) {
                let first = firstReveal(of: c)
                w.byte(1)
                w.varint(UInt64(rank[Int(first.author)]))
                w.varint(first.lamport)
            } else {
                w.byte(board.mark(at: c) == .none ? 0 : 1 + board.mark(at: c).rawValue)
            }
        }
        let s = points(byNumber: true)
        for a in sorted { w.varint(s[a] ?? 0) }
        if let t = trippedBy { w.byte(1); w.append(t.bytes) } else { w.byte(0) }
        w.varint(startMillis)
        if let e = endMillis { w.byte(1); w.varint(e) } else { w.byte(0) }
        w.varint(assistedBy.count)
        for a in assistedBy.sorted() { w.append(a.bytes) }
        // Roles and the archive flag only when used, so that the digests of
        // games made before them stay what they were.
        if usesRoles {
            if let players {
                w.byte(1)
                w.varint(players.count)
                for p in players.sorted() { w.append(p.bytes) }
            } else {
                w.byte(0)
            }
            w.byte(isArchived ? 1 : 0)
        }
        // Hints and the seed's choice likewise only when used.
        if usesHints {
            w.byte(isSeeded ? 1 : 0)
            w.varint(hintsBy.count)
            for (a, n) in hintsBy.sorted(by: { $0.key < $1.key }) {
                w.append(a.bytes)
                w.varint(n)
            }
        }
        // The day's board likewise only when said, after a byte the hints'
        // block never starts with.
        if usesDaily {
            w.byte(0xDA)
            w.varint(dailyDay ?? 0)
        }
        // A race's boards, each racer's digest by key; a racer's board says
        // when its racer gave up. (No earlier game has either.)
        if let lanes {
            w.byte(0x52)
            w.varint(lanes.count)
            for racer in lanes.keys.sorted() {
                w.append(racer.bytes)
                w.append(lanes[racer]?.digest ?? [])
            }
        }
        if let gaveUp = gaveUpMillis {
            w.byte(0x47)
            w.varint(gaveUp)
        }
        return Blake2b.hash(w.bytes, length: 32)
    }
}
