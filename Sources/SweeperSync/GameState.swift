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
    public private(set) var board: Board

    // Per cell: the first reveal (Lamport 0 = not revealed) and the mark register.
    private var firstLamport: [UInt64]
    private var firstAuthor: [Int32]
    private var firstWall: [UInt64]
    private var markLamport: [UInt64]
    private var markAuthor: [Int32]
    private var markValue: [Mark]
    /// Authors seen, indexed by the numbers stored per cell.
    private var authors: [PeerID] = []
    private var authorIndex: [PeerID: Int32] = [:]
    /// Who used the assist (cheat), if anyone.
    public private(set) var assistedBy: Set<PeerID> = []
    /// When each of them first looked at the mines: the wall clock of
    /// their assist op with the smallest stamp (ms since 1970).
    public private(set) var peeks: [PeerID: UInt64] = [:]
    private var peekStamps: [PeerID: Stamp] = [:]
    /// How many hints each player asked for (hint ops, peer protocol 12).
    public private(set) var hintsBy: [PeerID: Int] = [:]
    /// Whether the creator chose the seed (a seeded op, peer protocol 12):
    /// a practice game, kept out of records.
    public private(set) var isSeeded = false
    /// Whether a hint or seeded op was applied: peers before hello
    /// version 12 cannot read the game.
    public private(set) var usesHints = false
    /// Who may move, when the creator chose: the creator, the genesis's
    /// players and every player added since; `nil` when every member may.
    public private(set) var players: Set<PeerID>?
    /// The archive op with the greatest stamp, if any: its value says
    /// whether the game is hidden from lists.
    private var archiveRegister: (stamp: Stamp, archived: Bool)?
    /// Whether an op of a kind that only peers of hello version 7 or later
    /// read was applied (the genesis's player list included).
    public private(set) var usesRoles: Bool
    /// Whether a flood op was applied: peers before hello version 8 cannot read the game.
    public private(set) var usesFloods = false
    /// Whether the game is private: its ops are sealed with a key only
    /// its players hold.
    public internal(set) var isPrivate = false

    /// The state right after `genesisOp` (which must carry a genesis).
    init(genesisOp: Op, genesis: Genesis) {
        gameID = genesisOp.gameID
        creator = genesisOp.author
        self.genesis = genesis
        genesisStamp = genesisOp.stamp
        genesisWall = genesisOp.wallClockMillis
        let n = genesis.geometry.cellCount
        firstLamport = [UInt64](repeating: 0, count: n)
        firstAuthor = [Int32](repeating: -1, count: n)
        firstWall = [UInt64](repeating: 0, count: n)
        markLamport = [UInt64](repeating: 0, count: n)
        markAuthor = [Int32](repeating: -1, count: n)
        markValue = [Mark](repeating: .none, count: n)
        players = genesis.players.map { $0.union([genesisOp.author]) }
        usesRoles = genesis.players != nil
        let opening = Board(layout: genesis.layout, start: genesis.startIndex, questionMarks: genesis.questionMarks)
        board = Board(layout: genesis.layout, questionMarks: genesis.questionMarks)
        let a = index(of: genesisOp.author)
        var openingCells: [Int] = []
        for i in 0..<n where opening.isRevealed(i) {
            firstLamport[i] = genesisOp.lamport
            firstAuthor[i] = a
            firstWall[i] = genesis.createdAtMillis
            openingCells.append(i)
        }
        board.reveal(cells: openingCells)
    }

    private mutating func index(of author: PeerID) -> Int32 {
        if let i = authorIndex[author] { return i }
        let i = Int32(authors.count)
        authors.append(author)
        authorIndex[author] = i
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
            guard markAuthor[cell] < 0 || precedes(markLamport[cell], markAuthor[cell], op.lamport, a) else { return [] }
            markLamport[cell] = op.lamport
            markAuthor[cell] = a
            markValue[cell] = mark
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
        }
    }

    /// Reveals `cells` as `op` did: each covered cell opens with its
    /// stamp, and a cell opened before by a later stamp takes this one.
    private mutating func reveal(_ cells: some Sequence<Int>, by op: Op, author a: Int32) -> [Int] {
        var newly: [Int] = []
        for c in cells {
            if firstLamport[c] == 0 {
                firstLamport[c] = op.lamport
                firstAuthor[c] = a
                firstWall[c] = op.wallClockMillis
                newly.append(c)
            } else if precedes(op.lamport, a, firstLamport[c], firstAuthor[c]) {
                firstLamport[c] = op.lamport
                firstAuthor[c] = a
                firstWall[c] = op.wallClockMillis
            }
        }
        board.reveal(cells: newly)
        return newly
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
            return author == creator && players != nil
        case .seeded:
            return author == creator
        default:
            return mayMove(author)
        }
    }

    /// Whether `peer` may move in this game (false for a spectator).
    public func mayMove(_ peer: PeerID) -> Bool { players?.contains(peer) ?? true }

    /// Whether the game is hidden from lists (the last archive op said so).
    public var isArchived: Bool { archiveRegister?.archived ?? false }

    // MARK: Derived

    /// Playing, won (every safe cell revealed) or lost (a mine revealed).
    public var status: GameStatus { board.status }

    /// Whether anyone looked at the mines or asked for a hint in this game.
    public var isAssisted: Bool { !assistedBy.isEmpty || !hintsBy.isEmpty }

    /// Who first revealed `cell` (the smallest stamp), or `nil` when covered.
    /// The opening's cells belong to the creator.
    public func firstRevealer(of cell: Int) -> PeerID? {
        guard cell >= 0, cell < firstLamport.count, firstLamport[cell] != 0 else { return nil }
        return authors[Int(firstAuthor[cell])]
    }

    /// The stamp of `cell`'s first reveal, or `nil` when covered.
    public func firstRevealStamp(of cell: Int) -> Stamp? {
        guard let who = firstRevealer(of: cell) else { return nil }
        return Stamp(lamport: firstLamport[cell], author: who)
    }

    private func isOpeningCell(_ c: Int) -> Bool {
        firstLamport[c] == genesisStamp.lamport && authors[Int(firstAuthor[c])] == genesisStamp.author
    }

    /// Points per player: for each safe cell a player revealed first, 1 for
    /// a zero and N for a number N. The opening scores for nobody.
    public var scores: [PeerID: Int] {
        var totals = [Int](repeating: 0, count: authors.count)
        let layout = genesis.layout
        for c in 0..<firstLamport.count where firstLamport[c] != 0 && !layout.isMine(c) && !isOpeningCell(c) {
            totals[Int(firstAuthor[c])] += layout.score(of: c)
        }
        var out: [PeerID: Int] = [:]
        for (i, t) in totals.enumerated() where t > 0 { out[authors[i]] = t }
        return out
    }

    /// The revealed mine with the smallest first-reveal stamp, if any.
    private var trippingCell: Int? {
        // Only a lost game has a revealed mine: no scan of the board while playing.
        guard board.status == .lost else { return nil }
        var best: Int?
        let layout = genesis.layout
        for c in 0..<firstLamport.count where firstLamport[c] != 0 && layout.isMine(c) {
            if let b = best {
                if precedes(firstLamport[c], firstAuthor[c], firstLamport[b], firstAuthor[b]) { best = c }
            } else {
                best = c
            }
        }
        return best
    }

    /// The mine that went off (the earliest revealed mine by stamp), if any.
    public var trippedMine: Int? { trippingCell }

    /// Who revealed the mine that went off, if anyone did.
    public var trippedBy: PeerID? { trippingCell.map { authors[Int(firstAuthor[$0])] } }

    /// When the game started: the genesis creation time (ms since 1970).
    public var startMillis: UInt64 { genesis.createdAtMillis }

    /// When the game ended, if it did: for a loss the wall clock of the op
    /// that tripped the mine; for a win, that of the op whose first reveal
    /// comes last by stamp.
    public var endMillis: UInt64? {
        switch status {
        case .playing:
            return nil
        case .lost:
            return trippingCell.map { firstWall[$0] }
        case .won:
            var last: Int?
            let layout = genesis.layout
            for c in 0..<firstLamport.count where !layout.isMine(c) {
                if let l = last {
                    if precedes(firstLamport[l], firstAuthor[l], firstLamport[c], firstAuthor[c]) { last = c }
                } else {
                    last = c
                }
            }
            return last.map { firstWall[$0] }
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
        let n = firstLamport.count
        for c in 0..<n {
            if firstLamport[c] != 0 {
                w.byte(1)
                w.varint(UInt64(rank[Int(firstAuthor[c])]))
                w.varint(firstLamport[c])
            } else {
                w.byte(board.mark(at: c) == .none ? 0 : 1 + board.mark(at: c).rawValue)
            }
        }
        let s = scores
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
        return Blake2b.hash(w.bytes, length: 32)
    }
}
