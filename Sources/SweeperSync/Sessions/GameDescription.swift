import SweeperConventions
import SweeperCrypto
import SweeperGame

/// What a peer tells of an open game it holds and the asker does not (a
/// game it could follow): the game's genesis and creator, which its id
/// binds, and the holder's word on how far the game has got.
///
/// The id is BLAKE2b over the creator's key and the genesis
/// (``Genesis/gameID(creator:)``), so a holder cannot misdescribe a game's
/// size, mines, opening, players or start time; the receiver derives the
/// id and keeps only descriptions of the games it asked about. The status
/// and progress are the holder's word until the game is followed, when its
/// signed ops decide.
///
/// Encoding: creator key (32) ‖ genesis length (LEB128) ‖ genesis
/// (``Genesis``'s encoding) ‖ status (1 byte: 0 playing, 1 won, 2 lost) ‖
/// progress in thousandths of the safe cells revealed (LEB128, at most 1000).
public struct GameDescription: Sendable, Hashable {
    /// Who created the game.
    public let creator: PeerID
    /// The game's genesis.
    public let genesis: Genesis
    /// Where the game stands, as the holder says.
    public let status: GameStatus
    /// The share of safe cells revealed, in thousandths, as the holder says.
    public let progressPermille: Int

    /// Describes a game.
    public init(creator: PeerID, genesis: Genesis, status: GameStatus, progressPermille: Int) {
        self.creator = creator
        self.genesis = genesis
        self.status = status
        self.progressPermille = min(1000, max(0, progressPermille))
    }

    /// The game described: derived, never taken on the holder's word.
    public var gameID: GameID { genesis.gameID(creator: creator) }

    /// The most bytes one genesis may take in a description.
    static let genesisByteLimit = Genesis.layoutByteLimit + 64 * 1024

    func encode(into w: inout ByteWriter) {
        w.append(creator.bytes)
        var g = ByteWriter()
        genesis.encode(into: &g)
        w.lengthPrefixed(g.bytes)
        w.byte(Self.code(of: status))
        w.varint(progressPermille)
    }

    static func decode(from r: inout ByteReader) throws(ByteDecodingError) -> GameDescription {
        let creator = try PeerID.fromDecoded(try r.take(PeerID.byteCount, "creator key"))
        var g = ByteReader(try r.lengthPrefixed("genesis", max: genesisByteLimit))
        let genesis = try Genesis.decode(from: &g)
        try g.expectEnd()
        let code = try r.byte("status")
        guard let status = Self.status(code) else { throw .unknownKind(field: "status", value: code) }
        let progress = try r.int("progress", max: 1000)
        return GameDescription(creator: creator, genesis: genesis, status: status, progressPermille: progress)
    }

    private static func code(of status: GameStatus) -> UInt8 {
        switch status {
        case .playing: 0
        case .won: 1
        case .lost: 2
        }
    }

    private static func status(_ code: UInt8) -> GameStatus? {
        switch code {
        case 0: .playing
        case 1: .won
        case 2: .lost
        default: nil
        }
    }
}

extension GameOverview {
    /// The overview of a game that a peer described and this device does
    /// not hold: what its genesis says, and where it stands as the holder
    /// says. What later ops decide (archived, assisted, a day, a chosen
    /// seed, players added) is not known until the game is followed, and
    /// reads as absent; its creator is its only author known.
    public init(described d: GameDescription) {
        let genesis = d.genesis
        gameID = d.gameID
        creator = d.creator
        parameters = genesis.parameters
        startMillis = genesis.createdAtMillis
        status = d.status
        isArchived = false
        players = genesis.players
        dailyDay = nil
        isPrivate = false
        isRace = genesis.isRace
        isSeeded = false
        var features: GameFeatures = genesis.players != nil ? .roles : []
        if genesis.isRace { features.insert(.race) }
        self.features = features
        authors = [d.creator]
        progress = Double(d.progressPermille) / 1000
        creatorProgress = progress
        endMillis = nil
        isAssisted = false
    }
}
