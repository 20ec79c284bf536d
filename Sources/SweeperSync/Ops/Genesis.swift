import SweeperConventions
import SweeperCrypto
import SweeperGame

/// Everything a game starts from: size, mines, the layout itself, the
/// opening, options and the generation parameters. Peers never re-run the
/// generator; they read the layout from here.
public struct Genesis: Hashable, Sendable {
    /// The largest number of bytes an encoded mine layout may take.
    static let layoutByteLimit = (CellRuns.cellLimit + 7) / 8 + 16

    /// The validated board parameters (size, mine count, start cell, no-guess).
    public let parameters: GameParameters
    /// Where the mines are.
    public let layout: MineLayout
    /// Whether marks cycle through question marks in this game.
    public let questionMarks: Bool
    /// The generator seed the layout came from (kept so the board can be reproduced).
    public let seed: UInt64
    /// When the game was created, in milliseconds since 1970 (UTC).
    public let createdAtMillis: UInt64
    /// Who may move besides the creator, when the creator chose
    /// (``GameRoles``); `nil` when every member of the circle may.
    public let players: Set<PeerID>?
    /// Whether the game is a race: the creator and its players each play
    /// the same layout on a board of their own (peer protocol 14). A race
    /// names its players.
    public let isRace: Bool

    /// The most players a genesis or a players op names.
    public static let playerLimit = 256

    /// Creates a genesis, checking that the layout fits the parameters, that
    /// the start cell is mine-free and, when the mine count leaves room, that
    /// its neighbours are too, so nobody dies on the first click.
    /// `players` are those who may move besides the creator (`nil`: every
    /// member of the circle); at most ``playerLimit``. A race (`isRace`)
    /// names them: they are the creator's rivals.
    public init(
        parameters: GameParameters, layout: MineLayout, questionMarks: Bool, seed: UInt64, createdAtMillis: UInt64,
        players: Set<PeerID>? = nil, isRace: Bool = false
    ) throws(ByteDecodingError) {
        if let players, players.count > Self.playerLimit { throw .tooLarge(field: "players", limit: Self.playerLimit) }
        guard !isRace || players != nil else { throw .invalidGenesis("a race names its players") }
        guard layout.geometry == parameters.geometry else { throw .invalidGenesis("layout size does not match the parameters") }
        guard layout.mineCount == parameters.mines else {
            throw .invalidGenesis("layout has \(layout.mineCount) mines; the parameters say \(parameters.mines)")
        }
        let start = parameters.geometry.index(of: parameters.start)
        guard !layout.isMine(start) else { throw .invalidGenesis("the start cell holds a mine") }
        if parameters.clearsStartNeighbours {
            var mineNextToStart = false
            parameters.geometry.forEachNeighbor(of: start) { if layout.isMine($0) { mineNextToStart = true } }
            guard !mineNextToStart else { throw .invalidGenesis("a mine touches the start cell, though the size leaves room for a clear opening") }
        }
        self.parameters = parameters
        self.layout = layout
        self.questionMarks = questionMarks
        self.seed = seed
        self.createdAtMillis = createdAtMillis
        self.players = players
        self.isRace = isRace
    }

    /// The board's shape.
    public var geometry: BoardGeometry { parameters.geometry }

    /// The start cell's index.
    public var startIndex: Int { parameters.geometry.index(of: parameters.start) }

    /// The game id for this genesis made by `creator`: BLAKE2b-128 over a
    /// domain string, the creator's key and the encoded genesis payload. So
    /// only the creator can make a genesis for an id, and it names one board.
    public func gameID(creator: PeerID) -> GameID {
        var w = ByteWriter()
        encode(into: &w)
        return GameID(unchecked: Blake2b.hash(Array("sweeper/game-id/v1".utf8), creator.bytes, w.bytes, length: 16))
    }

    // MARK: Encoding

    /// Layout codings; the encoder picks the shortest, lowest tag on a tie.
    enum LayoutCoding: UInt8 {
        /// LEB128 gaps between successive mines.
        case mineGaps = 0
        /// LEB128 gaps between successive safe cells (dense boards).
        case safeGaps = 1
        /// The packed bitmap (``MineLayout/packedBits``).
        case bitmap = 2
    }

    /// width, height, mines, start index (LEB128), options byte (bit 0
    /// question marks, bit 1 no-guess, bit 2 players listed, bit 3 a race,
    /// which needs bit 2), seed (8 bytes
    /// LE), creation time, layout coding byte, length-prefixed layout bytes,
    /// and with bit 2 the players: count (LEB128) ‖ keys in ascending order.
    func encode(into w: inout ByteWriter) {
        let g = geometry
        w.varint(g.width)
        w.varint(g.height)
        w.varint(parameters.mines)
        w.varint(startIndex)
        w.byte((questionMarks ? 1 : 0) | (parameters.noGuess ? 2 : 0) | (players != nil ? 4 : 0) | (isRace ? 8 : 0))
        w.uint64(seed)
        w.varint(createdAtMillis)
        let (coding, bytes) = Self.encodeLayout(layout)
        w.byte(coding.rawValue)
        w.lengthPrefixed(bytes)
        if let players { Self.encodePlayers(players, into: &w) }
    }

    /// A set of keys as count (LEB128) ‖ keys in ascending order.
    static func encodePlayers(_ players: Set<PeerID>, into w: inout ByteWriter) {
        w.varint(players.count)
        for p in players.sorted() { w.append(p.bytes) }
    }

    /// Reads keys written by ``encodePlayers(_:into:)``: ascending, no
    /// repeats, at most ``playerLimit``, and at least `minimum`.
    static func decodePlayers(from r: inout ByteReader, minimum: Int) throws(ByteDecodingError) -> Set<PeerID> {
        let count = try r.int("player count", max: playerLimit)
        guard count >= minimum else { throw .valueOutOfRange(field: "player count", value: UInt64(count)) }
        var out = Set<PeerID>()
        var previous: PeerID?
        for _ in 0..<count {
            let key = try PeerID.fromDecoded(try r.take(PeerID.byteCount, "player key"))
            if let previous, !(previous < key) { throw .unordered(field: "players") }
            out.insert(key)
            previous = key
        }
        return out
    }

    static func encodeLayout(_ layout: MineLayout) -> (LayoutCoding, [UInt8]) {
        let n = layout.geometry.cellCount
        func gaps(_ wanted: Bool) -> [UInt8] {
            var w = ByteWriter(capacity: 256)
            var previous = -1
            for i in 0..<n where layout.isMine(i) == wanted {
                w.varint(i - previous - 1)
                previous = i
            }
            return w.bytes
        }
        var best: (LayoutCoding, [UInt8]) = (.bitmap, layout.packedBits)
        let safeCount = n - layout.mineCount
        // Only try a gap coding when it could beat the bitmap (≥ 1 byte per entry).
        if safeCount <= best.1.count {
            let s = gaps(false)
            if s.count <= best.1.count { best = (.safeGaps, s) }
        }
        if layout.mineCount <= best.1.count {
            let m = gaps(true)
            if m.count <= best.1.count { best = (.mineGaps, m) }
        }
        return best
    }

    static func decode(from r: inout ByteReader) throws(ByteDecodingError) -> Genesis {
        let side = BoardGeometry.maximumSide
        let width = try r.int("width", max: side)
        let height = try r.int("height", max: side)
        let mines = try r.int("mine count", max: side * side)
        let start = try r.int("start cell", max: side * side)
        let options = try r.byte("options")
        guard options & ~15 == 0 else { throw .reservedBitsSet(field: "genesis options") }
        let seed = try r.uint64("seed")
        let created = try r.varint("creation time")
        let codingByte = try r.byte("layout coding")
        guard let coding = LayoutCoding(rawValue: codingByte) else { throw .unknownKind(field: "layout coding", value: codingByte) }
        let bytes = try r.lengthPrefixed("layout", max: layoutByteLimit)
        let players = options & 4 != 0 ? try decodePlayers(from: &r, minimum: 0) : nil

        guard width >= BoardGeometry.minimumSide, height >= BoardGeometry.minimumSide else {
            throw .invalidGenesis("size \(width)×\(height) is below the minimum")
        }
        let geometry = BoardGeometry(width: width, height: height)
        guard geometry.contains(index: start) else { throw .cellOutOfRange(start) }
        let parameters: GameParameters
        do {
            parameters = try GameParameters(width: width, height: height, mines: mines, start: geometry.cell(at: start), noGuess: options & 2 != 0)
        } catch {
            throw .invalidGenesis(error.description)
        }
        let layout = try decodeLayout(coding, bytes, geometry: geometry, mines: mines)
        return try Genesis(
            parameters: parameters, layout: layout, questionMarks: options & 1 != 0, seed: seed, createdAtMillis: created,
            players: players, isRace: options & 8 != 0)
    }

    static func decodeLayout(_ coding: LayoutCoding, _ bytes: [UInt8], geometry: BoardGeometry, mines: Int) throws(ByteDecodingError) -> MineLayout {
        let n = geometry.cellCount
        func gapIndices(count: Int) throws(ByteDecodingError) -> [Int] {
            var r = ByteReader(bytes)
            var out: [Int] = []
            out.reserveCapacity(count)
            var previous = -1
            for _ in 0..<count {
                let gap = try r.int("layout gap", max: n)
                let i = previous + 1 + gap
                guard i < n else { throw .cellOutOfRange(i) }
                out.append(i)
                previous = i
            }
            try r.expectEnd()
            return out
        }
        do {
            switch coding {
            case .bitmap:
                return try MineLayout(geometry: geometry, packedBits: bytes)
            case .mineGaps:
                return try MineLayout(geometry: geometry, mineIndices: gapIndices(count: mines))
            case .safeGaps:
                guard mines <= n else { throw ByteDecodingError.invalidGenesis("more mines than cells") }
                let safe = try gapIndices(count: n - mines)
                var isMine = [Bool](repeating: true, count: n)
                for i in safe { isMine[i] = false }
                return MineLayout(geometry: geometry, isMine: isMine)
            }
        } catch let e as ByteDecodingError {
            throw e
        } catch let e as LayoutError {
            throw .invalidGenesis(e.description)
        } catch {
            throw .invalidGenesis("\(error)")
        }
    }
}
