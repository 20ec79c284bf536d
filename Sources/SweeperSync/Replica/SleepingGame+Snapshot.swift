import SweeperConventions
import SweeperCrypto
import SweeperGame

/// A sleeping game written down, so that a daemon that starts knows its
/// games without replaying their ops: what ``SleepingGame`` holds, as
/// bytes. A snapshot never leaves the device and is never trusted beyond
/// the store that wrote it: the store drops it the moment any op of its
/// game is written, changed or deleted, and a snapshot that does not
/// decode is ignored (the game is replayed instead).
///
/// Format 1: the format byte ‖ the vector (count ‖ (key ‖ seq)…, keys
/// ascending) ‖ the unsigned heads (the same) ‖ the equivocators (count ‖
/// keys ascending) ‖ a flag byte (bit 0 an overview, bit 1 a private
/// header) ‖ the overview ‖ the private header (creator ‖ players). A
/// private game's key is not written: a sleeping game never reads it
/// (waking rebuilds it, key included, from the ops).
extension SleepingGame {
    /// The format this build writes and reads.
    public static let snapshotFormat: UInt8 = 1

    /// The snapshot's bytes.
    public var snapshot: [UInt8] {
        var w = ByteWriter(capacity: 256)
        w.byte(Self.snapshotFormat)
        Self.encodeHeads(vector.heads, into: &w)
        Self.encodeHeads(unsignedHeads, into: &w)
        Genesis.encodePlayers(equivocators, into: &w)
        w.byte((overview != nil ? 1 : 0) | (privateHeader != nil ? 2 : 0))
        if let overview { overview.encode(into: &w) }
        if let privateHeader {
            w.append(privateHeader.creator.bytes)
            Genesis.encodePlayers(privateHeader.players, into: &w)
        }
        return w.bytes
    }

    /// The sleeping game `bytes` describe; throws when they do not decode
    /// as this build's format.
    public init(snapshot bytes: [UInt8]) throws(ByteDecodingError) {
        var r = ByteReader(bytes)
        let format = try r.byte("snapshot format")
        guard format == Self.snapshotFormat else { throw .unknownVersion(format) }
        let heads = try Self.decodeHeads(from: &r)
        let unsigned = try Self.decodeHeads(from: &r)
        let equivocators = try Genesis.decodePlayers(from: &r, minimum: 0)
        let flags = try r.byte("snapshot flags")
        guard flags & ~3 == 0 else { throw .reservedBitsSet(field: "snapshot flags") }
        let overview = flags & 1 != 0 ? try GameOverview(decoding: &r) : nil
        var header: PrivateGameHeader?
        if flags & 2 != 0 {
            let creator = try PeerID.fromDecoded(try r.take(PeerID.byteCount, "creator"))
            header = PrivateGameHeader(creator: creator, players: try Genesis.decodePlayers(from: &r, minimum: 0), key: nil)
        }
        try r.expectEnd()
        self.init(vector: VersionVector(heads: heads), overview: overview, privateHeader: header, equivocators: equivocators, unsignedHeads: unsigned)
    }

    /// Author → seq as count ‖ (key ‖ seq (LEB128))…, keys ascending.
    static func encodeHeads(_ heads: [PeerID: UInt64], into w: inout ByteWriter) {
        w.varint(heads.count)
        for (author, seq) in heads.sorted(by: { $0.key < $1.key }) {
            w.append(author.bytes)
            w.varint(seq)
        }
    }

    static func decodeHeads(from r: inout ByteReader) throws(ByteDecodingError) -> [PeerID: UInt64] {
        let count = try r.int("head count", max: 1 << 16)
        var out: [PeerID: UInt64] = [:]
        var previous: PeerID?
        for _ in 0..<count {
            let author = try PeerID.fromDecoded(try r.take(PeerID.byteCount, "head author"))
            if let previous, !(previous < author) { throw .unordered(field: "heads") }
            out[author] = try r.varint("head seq")
            previous = author
        }
        return out
    }
}

extension GameOverview {
    /// game id ‖ creator ‖ width ‖ height ‖ mines ‖ start index ‖ a flag
    /// byte (no-guess, archived, private, race, seeded, assisted, players
    /// listed, a day) ‖ status ‖ features ‖ start ms ‖ end ms + 1 (0: not
    /// ended) ‖ progress and creator's progress (IEEE 754, 8 bytes LE) ‖
    /// the day, when flagged ‖ the players, when flagged ‖ the authors in
    /// order (count ‖ keys).
    func encode(into w: inout ByteWriter) {
        w.append(gameID.bytes)
        w.append(creator.bytes)
        w.varint(parameters.width)
        w.varint(parameters.height)
        w.varint(parameters.mines)
        w.varint(parameters.geometry.index(of: parameters.start))
        var flags: UInt8 = parameters.noGuess ? 1 : 0
        if isArchived { flags |= 2 }
        if isPrivate { flags |= 4 }
        if isRace { flags |= 8 }
        if isSeeded { flags |= 16 }
        if isAssisted { flags |= 32 }
        if players != nil { flags |= 64 }
        if dailyDay != nil { flags |= 128 }
        w.byte(flags)
        w.byte(status == .playing ? 0 : status == .won ? 1 : 2)
        w.byte(features.rawValue)
        w.varint(startMillis)
        w.varint(endMillis.map { $0 &+ 1 } ?? 0)
        w.uint64(progress.bitPattern)
        w.uint64(creatorProgress.bitPattern)
        if let dailyDay { w.varint(dailyDay) }
        if let players { Genesis.encodePlayers(players, into: &w) }
        w.varint(authors.count)
        for author in authors { w.append(author.bytes) }
    }

    init(decoding r: inout ByteReader) throws(ByteDecodingError) {
        guard let game = GameID(bytes: try r.take(GameID.byteCount, "game")) else { throw .truncated(field: "game") }
        gameID = game
        creator = try PeerID.fromDecoded(try r.take(PeerID.byteCount, "creator"))
        let width = try r.int("width", max: BoardGeometry.maximumSide), height = try r.int("height", max: BoardGeometry.maximumSide)
        let mines = try r.int("mines", max: width * height), start = try r.int("start", max: width * height)
        let flags = try r.byte("overview flags")
        guard width >= BoardGeometry.minimumSide, height >= BoardGeometry.minimumSide else { throw .invalidGenesis("size \(width)×\(height)") }
        let geometry = BoardGeometry(width: width, height: height)
        guard geometry.contains(index: start) else { throw .cellOutOfRange(start) }
        do {
            parameters = try GameParameters(width: width, height: height, mines: mines, start: geometry.cell(at: start), noGuess: flags & 1 != 0)
        } catch {
            throw .invalidGenesis(error.description)
        }
        isArchived = flags & 2 != 0
        isPrivate = flags & 4 != 0
        isRace = flags & 8 != 0
        isSeeded = flags & 16 != 0
        isAssisted = flags & 32 != 0
        let statusByte = try r.byte("status")
        switch statusByte {
        case 0: status = .playing
        case 1: status = .won
        case 2: status = .lost
        default: throw .unknownKind(field: "status", value: statusByte)
        }
        features = GameFeatures(rawValue: try r.byte("features"))
        startMillis = try r.varint("start ms")
        let end = try r.varint("end ms")
        endMillis = end == 0 ? nil : end - 1
        progress = Double(bitPattern: try r.uint64("progress"))
        creatorProgress = Double(bitPattern: try r.uint64("creator's progress"))
        dailyDay = flags & 128 != 0 ? try r.int("day", max: Int(Int32.max)) : nil
        players = flags & 64 != 0 ? try Genesis.decodePlayers(from: &r, minimum: 0) : nil
        authors = try r.list("authors", max: 1 << 16) { (r: inout ByteReader) throws(ByteDecodingError) in
            try PeerID.fromDecoded(try r.take(PeerID.byteCount, "author"))
        }
    }
}
