import SweeperConventions
import SweeperCrypto

/// The game key of a private game sealed to one of its players
/// (``GameKey/sealed(to:)``): only that player's identity opens it.
public struct SealedKey: Hashable, Sendable {
    /// The player.
    public let player: PeerID
    /// The key, sealed to the player (``GameKey/sealedByteCount`` bytes).
    public let sealed: [UInt8]

    /// Wraps a sealed key.
    public init(player: PeerID, sealed: [UInt8]) {
        self.player = player
        self.sealed = sealed
    }

    /// A list as count (LEB128) ‖ per player in ascending key order: key (32) ‖ sealed key.
    static func encode(_ keys: [SealedKey], into w: inout ByteWriter) {
        w.varint(keys.count)
        for k in keys.sorted(by: { $0.player < $1.player }) {
            w.append(k.player.bytes)
            w.append(k.sealed)
        }
    }

    /// Reads ``encode(_:into:)``: ascending, no repeats, `minimum` to `maximum` entries.
    static func decode(from r: inout ByteReader, minimum: Int, maximum: Int) throws(ByteDecodingError) -> [SealedKey] {
        let count = try r.int("player count", max: maximum)
        guard count >= minimum else { throw .valueOutOfRange(field: "player count", value: UInt64(count)) }
        var out: [SealedKey] = []
        for _ in 0..<count {
            let player = try PeerID.fromDecoded(try r.take(PeerID.byteCount, "player key"))
            if let previous = out.last, !(previous.player < player) { throw .unordered(field: "players") }
            out.append(SealedKey(player: player, sealed: try r.take(GameKey.sealedByteCount, "sealed game key")))
        }
        return out
    }
}

/// The genesis of a private game: its players, each with the game key
/// sealed to them, and the game's ``Genesis`` sealed with that key. Members
/// who do not play see who plays and relay the game, but cannot read it.
public struct PrivateGenesis: Hashable, Sendable {
    /// The most bytes the sealed genesis may take.
    static let sealedLimit = Genesis.layoutByteLimit + 1024

    /// The players, the creator among them, in ascending key order, each
    /// with the game key sealed to them.
    public let readers: [SealedKey]
    /// The genesis payload (``Genesis``'s encoding) sealed with the game key.
    public let sealedGenesis: [UInt8]

    /// Wraps a private genesis.
    public init(readers: [SealedKey], sealedGenesis: [UInt8]) {
        self.readers = readers.sorted { $0.player < $1.player }
        self.sealedGenesis = sealedGenesis
    }

    /// Who plays (the creator included).
    public var players: Set<PeerID> { Set(readers.map(\.player)) }

    /// The game id: BLAKE2b-128 over the id domain, the creator's key and
    /// this payload, as for an open game's genesis.
    public func gameID(creator: PeerID) -> GameID {
        var w = ByteWriter()
        encode(into: &w)
        return GameID(unchecked: Blake2b.hash(Array("sweeper/game-id/v1".utf8), creator.bytes, w.bytes, length: 16))
    }

    func encode(into w: inout ByteWriter) {
        SealedKey.encode(readers, into: &w)
        w.lengthPrefixed(sealedGenesis)
    }

    static func decode(from r: inout ByteReader) throws(ByteDecodingError) -> PrivateGenesis {
        let readers = try SealedKey.decode(from: &r, minimum: 1, maximum: Genesis.playerLimit + 1)
        let sealed = try r.lengthPrefixed("sealed genesis", max: sealedLimit)
        return PrivateGenesis(readers: readers, sealedGenesis: sealed)
    }

    /// The genesis, opened with `key`; `nil` when it does not open, does
    /// not decode, or its players are not the readers but the creator.
    func open(with key: GameKey, creator: PeerID) -> Genesis? {
        guard let plain = key.open(sealedGenesis) else { return nil }
        var r = ByteReader(plain)
        guard let g = try? Genesis.decode(from: &r), (try? r.expectEnd()) != nil,
            g.players == players.subtracting([creator])
        else { return nil }
        return g
    }
}

/// What a replica knows of a private game whether or not it can read it:
/// its creator, its players, and (for a player) the game key.
public struct PrivateGameHeader: Sendable {
    /// Who created the game.
    public let creator: PeerID
    /// Who plays: the genesis's readers and every player added since.
    public internal(set) var players: Set<PeerID>
    /// The game key, when this replica's reader plays and its copy opened.
    public internal(set) var key: GameKey?

    /// The payload inside a sealed op, opened with the key: `nil` when
    /// there is no key, the box does not open or decode, its kind has no
    /// place inside a sealed op, or it names a cell past `cellCount`. Such
    /// an op changes nothing (every player finds the same).
    func opened(_ box: [UInt8], cellCount: Int) -> OpPayload? {
        guard let key, let plain = key.open(box) else { return nil }
        var r = ByteReader(plain)
        guard let payload = try? OpPayload.decode(from: &r), (try? r.expectEnd()) != nil else { return nil }
        switch payload {
        case .reveal, .mark, .assisted, .archive, .flood, .hint, .seeded:
            return payload.cellUpperBound <= cellCount ? payload : nil
        case .genesis, .players, .privateGenesis, .sealed, .privatePlayers, .daily, .resign:
            return nil
        }
    }
}

extension GameReplica {
    /// A private game's header from its genesis: a player among `readers` opens its key.
    static func header(of genesisOp: Op, _ g: PrivateGenesis, readers: [SigningIdentity]) -> PrivateGameHeader {
        PrivateGameHeader(creator: genesisOp.author, players: g.players.union([genesisOp.author]), key: key(in: g.readers, for: readers))
    }

    /// The game key sealed to the first of `readers` that `sealed` names, opened.
    static func key(in sealed: [SealedKey], for readers: [SigningIdentity]) -> GameKey? {
        for reader in readers {
            if let mine = sealed.first(where: { $0.player == reader.peerID }), let key = GameKey(opening: mine.sealed, with: reader) { return key }
        }
        return nil
    }
}
