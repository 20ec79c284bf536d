import Foundation
import SweeperControl
import SweeperGame
import SweeperStore

/// Why a player's action was refused.
struct GameActionError: Error, Sendable {
    var error: ControlError

    static func outsideBoard(_ x: Int, _ y: Int, _ g: BoardGeometry) -> GameActionError {
        GameActionError(error: ControlError(
            code: "outside-board",
            message: "cell \(x),\(y) is outside the \(g.width)×\(g.height) board (x 0–\(g.width - 1), y 0–\(g.height - 1))"))
    }
    static func gameOver(_ status: GameStatus) -> GameActionError {
        GameActionError(error: ControlError(code: "game-over", message: "the game is over (\(status == .won ? "solved" : "lost"))"))
    }
}

/// The local player, as ops name them.
struct LocalAuthor: Sendable {
    /// Stable author id bytes (the public key).
    var key: Data
    /// Printable peer id.
    var peerID: String
}

/// One game as the daemon holds it: the replicated state built from its ops,
/// and the way local actions become new ops.
///
/// Provisional op format (until SweeperSync's signed ops are wired in): a
/// JSON object per op. The state is a pure function of the op set: reveals
/// are a union, marks are last-writer-wins by (Lamport, author), the first
/// revealer of a cell is the smallest (Lamport, author).
struct GameReplica: Sendable {
    struct Op: Codable, Sendable {
        enum Kind: String, Codable, Sendable { case genesis, reveal, mark, cheat }
        var game: String
        var author: String
        var seq: Int64
        var lamport: Int64
        var time: Double
        var kind: Kind
        var cells: [Int]?
        var mark: Mark?
        // genesis
        var width: Int?
        var height: Int?
        var mines: Int?
        var layout: String?
        var start: Int?
        var seed: UInt64?
        var noGuess: Bool?
        var questionMarks: Bool?
    }

    let id: String
    let parameters: GameParameters
    let layout: MineLayout
    let start: Int
    let seed: UInt64
    let questionMarks: Bool
    let created: Date
    private(set) var ops: [Op] = []
    private(set) var board: Board
    private(set) var firstRevealer: [Int: (lamport: Int64, author: String)] = [:]
    private(set) var markClock: [Int: (lamport: Int64, author: String, mark: Mark)] = [:]
    private(set) var lamport: Int64 = 0
    private(set) var seqByAuthor: [String: Int64] = [:]
    private(set) var lastTime: Date
    private(set) var endTime: Date?
    private(set) var assisted = false
    private(set) var movers: [String] = []

    var status: GameStatus { board.status }

    // MARK: Creating and loading

    /// Makes a new game: generation, genesis op.
    static func create(
        parameters: GameParameters, seed: UInt64, questionMarks: Bool, author: LocalAuthor, now: Date
    ) throws -> (GameReplica, StoredOp) {
        let generated = try Generator.generate(parameters, seed: seed)
        var idBytes = [UInt8](repeating: 0, count: 16)
        for i in idBytes.indices { idBytes[i] = UInt8.random(in: 0...255) }
        let id = idBytes.map { String(format: "%02x", $0) }.joined()
        let op = Op(
            game: id, author: author.peerID, seq: 1, lamport: 1, time: now.timeIntervalSince1970, kind: .genesis,
            width: parameters.width, height: parameters.height, mines: parameters.mines,
            layout: Data(generated.layout.packedBits).base64EncodedString(), start: generated.start, seed: seed,
            noGuess: parameters.noGuess, questionMarks: questionMarks)
        let replica = try GameReplica(genesis: op)
        return (replica, try replica.stored(op, author: author))
    }

    /// Rebuilds a game from its stored ops (any order).
    init(stored: [StoredOp]) throws {
        let decoder = JSONDecoder()
        let ops = try stored.map { try decoder.decode(Op.self, from: $0.bytes) }
        guard let genesis = ops.first(where: { $0.kind == .genesis }) else {
            throw ControlError.internal("game without a genesis op")
        }
        try self.init(genesis: genesis)
        for op in ops.sorted(by: { ($0.lamport, $0.author, $0.seq) < ($1.lamport, $1.author, $1.seq) }) where op.kind != .genesis {
            apply(op)
        }
    }

    private init(genesis op: Op) throws {
        guard let w = op.width, let h = op.height, let m = op.mines, let start = op.start,
            let layoutText = op.layout, let packed = Data(base64Encoded: layoutText)
        else { throw ControlError.internal("malformed genesis op") }
        let parameters = try GameParameters(width: w, height: h, mines: m, start: nil, noGuess: op.noGuess ?? false)
        let layout = try MineLayout(geometry: parameters.geometry, packedBits: Array(packed))
        guard parameters.geometry.contains(index: start) else { throw ControlError.internal("genesis start outside the board") }
        id = op.game
        self.parameters = parameters
        self.layout = layout
        self.start = start
        self.seed = op.seed ?? 0
        self.questionMarks = op.questionMarks ?? false
        created = Date(timeIntervalSince1970: op.time)
        lastTime = created
        board = Board(layout: layout, start: start, questionMarks: questionMarks)
        ops = [op]
        lamport = op.lamport
        seqByAuthor[op.author] = op.seq
    }

    private func stored(_ op: Op, author: LocalAuthor) throws -> StoredOp {
        StoredOp(gameID: id, author: author.key, seq: op.seq, lamport: op.lamport, bytes: try JSONEncoder().encode(op))
    }

    // MARK: Applying

    private mutating func apply(_ op: Op) {
        ops.append(op)
        lamport = max(lamport, op.lamport)
        seqByAuthor[op.author] = max(seqByAuthor[op.author] ?? 0, op.seq)
        let time = Date(timeIntervalSince1970: op.time)
        lastTime = max(lastTime, time)
        let wasPlaying = board.status == .playing
        switch op.kind {
        case .genesis:
            break
        case .reveal:
            let cells = (op.cells ?? []).filter { board.geometry.contains(index: $0) }
            for c in cells {
                if let f = firstRevealer[c], (f.lamport, f.author) <= (op.lamport, op.author) { continue }
                firstRevealer[c] = (op.lamport, op.author)
            }
            _ = board.reveal(cells: cells)
            if !movers.contains(op.author) { movers.append(op.author) }
        case .mark:
            guard let cell = op.cells?.first, board.geometry.contains(index: cell), let mark = op.mark else { break }
            if let m = markClock[cell], (m.lamport, m.author) > (op.lamport, op.author) { break }
            markClock[cell] = (op.lamport, op.author, mark)
            if !board.isRevealed(cell) { _ = board.setMark(cell, mark) }
            if !movers.contains(op.author) { movers.append(op.author) }
        case .cheat:
            assisted = true
        }
        if wasPlaying && board.status != .playing { endTime = time }
    }

    private mutating func makeOp(_ kind: Op.Kind, cells: [Int]?, mark: Mark?, author: LocalAuthor, now: Date) throws -> StoredOp {
        let seq = (seqByAuthor[author.peerID] ?? 0) + 1
        let op = Op(
            game: id, author: author.peerID, seq: seq, lamport: lamport + 1, time: now.timeIntervalSince1970,
            kind: kind, cells: cells, mark: mark)
        let stored = try stored(op, author: author)
        apply(op)
        return stored
    }

    // MARK: Local actions

    private func index(_ x: Int, _ y: Int) throws(GameActionError) -> Int {
        let cell = Cell(x: x, y: y)
        guard board.geometry.contains(cell) else { throw .outsideBoard(x, y, board.geometry) }
        return board.geometry.index(of: cell)
    }

    /// A prepared local action: the op to commit and the replica after it.
    struct Action: Sendable {
        var op: StoredOp?
        var replica: GameReplica
        var changed: [Int]
    }

    /// Reveals (x, y) as `author`; nil op when nothing would change.
    func reveal(x: Int, y: Int, author: LocalAuthor, now: Date) throws -> Action {
        let i = try index(x, y)
        guard status == .playing else { throw GameActionError.gameOver(status) }
        let cells = board.cellsUncovered(by: i)
        guard !cells.isEmpty else { return Action(op: nil, replica: self, changed: []) }
        var next = self
        let op = try next.makeOp(.reveal, cells: cells, mark: nil, author: author, now: now)
        return Action(op: op, replica: next, changed: next.changedCells(cells))
    }

    /// Chords on (x, y).
    func chord(x: Int, y: Int, author: LocalAuthor, now: Date) throws -> Action {
        let i = try index(x, y)
        guard status == .playing else { throw GameActionError.gameOver(status) }
        let cells = board.cellsChorded(by: i)
        guard !cells.isEmpty else { return Action(op: nil, replica: self, changed: []) }
        var next = self
        let op = try next.makeOp(.reveal, cells: cells, mark: nil, author: author, now: now)
        return Action(op: op, replica: next, changed: next.changedCells(cells))
    }

    /// Sets or cycles the mark on (x, y).
    func flag(x: Int, y: Int, mark: Mark?, author: LocalAuthor, now: Date) throws -> Action {
        let i = try index(x, y)
        guard status == .playing else { throw GameActionError.gameOver(status) }
        guard !board.isRevealed(i) else { return Action(op: nil, replica: self, changed: []) }
        let target = mark ?? board.mark(at: i).next(questionMarks: questionMarks)
        guard target != board.mark(at: i) else { return Action(op: nil, replica: self, changed: []) }
        var next = self
        let op = try next.makeOp(.mark, cells: [i], mark: target, author: author, now: now)
        return Action(op: op, replica: next, changed: [i])
    }

    /// Marks the game as assisted (the mine-layout cheat); nil op when it already is.
    func cheat(author: LocalAuthor, now: Date) throws -> Action {
        guard !assisted else { return Action(op: nil, replica: self, changed: []) }
        var next = self
        let op = try next.makeOp(.cheat, cells: nil, mark: nil, author: author, now: now)
        return Action(op: op, replica: next, changed: [])
    }

    /// The cells to report after a reveal: the revealed ones, plus every mine
    /// when the game just ended (they become visible).
    private func changedCells(_ cells: [Int]) -> [Int] {
        guard status != .playing else { return cells }
        return Array(Set(cells).union(layout.mineIndices)).sorted()
    }

    // MARK: Derived views

    /// The elapsed time, to the end or to `now`.
    func elapsedSeconds(now: Date) -> Int {
        max(0, Int((endTime ?? (status == .playing ? now : lastTime)).timeIntervalSince(created)))
    }

    /// Scores per author: 1 per first-revealed zero, N per number N. The
    /// opening, revealed by the game itself, scores for nobody.
    var scores: [String: Int] {
        var out: [String: Int] = [:]
        for author in movers { out[author] = 0 }
        for (cell, first) in firstRevealer where !layout.isMine(cell) {
            out[first.author, default: 0] += layout.score(of: cell)
        }
        return out
    }

    /// Who revealed the mine that went off.
    var trippedBy: String? {
        guard let mine = board.detonatedMine else { return nil }
        return firstRevealer[mine]?.author
    }

    /// The look of one cell, as in the `board` rows of `show`.
    func look(_ i: Int) -> Character {
        let over = status != .playing
        if board.isRevealed(i) {
            if layout.isMine(i) { return "X" }
            let n = layout.adjacentMines(i)
            return n == 0 ? "." : Character(String(n))
        }
        switch board.mark(at: i) {
        case .flag: return "F"
        case .question: return over && layout.isMine(i) ? "*" : "?"
        case .none: return over && layout.isMine(i) ? "*" : "#"
        }
    }

    /// The board rows.
    var rows: [String] {
        let g = board.geometry
        return (0..<g.height).map { y in String((0..<g.width).map { look(g.index(x: $0, y: y)) }) }
    }

    /// The mine layout rows (`.` and `*`).
    var layoutRows: [String] {
        let g = board.geometry
        return (0..<g.height).map { y in String((0..<g.width).map { layout.isMine(g.index(x: $0, y: y)) ? "*" : "." }) }
    }

    /// Revealed cell count (mines included).
    var revealedCount: Int { (0..<board.geometry.cellCount).reduce(0) { $0 + (board.isRevealed($1) ? 1 : 0) } }

    /// A digest of the replicated state (FNV-1a over the board's rows and
    /// marks); equal on two peers holding the same ops.
    var digest: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        for b in id.utf8 { mix(b) }
        for row in rows { for b in row.utf8 { mix(b) } }
        mix(assisted ? 1 : 0)
        return String(format: "%016llx", hash)
    }
}
