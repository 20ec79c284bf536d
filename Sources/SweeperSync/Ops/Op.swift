import SweeperConventions
import SweeperCrypto
import SweeperGame
import Synchronization

/// What an op does.
public enum OpPayload: Hashable, Sendable {
    /// Creates the game. The creator's first op, and the only genesis.
    /// (Boxed, as ``privateGenesis`` is: a genesis is one op of a game's
    /// thousands, and held inline it would make every op's payload its size.)
    indirect case genesis(Genesis)
    /// Reveals exactly these cells (the author's action, flood and chord included).
    case reveal(CellRuns)
    /// Sets the mark on a cell; last writer wins by (Lamport time, author).
    case mark(cell: Int, mark: Mark)
    /// The author peeked at the mines (the reveal-mines view): the game counts as
    /// assisted for everybody.
    case assisted
    /// Lets more devices move in a game whose creator chose its players
    /// (the creator's alone; players are never removed).
    case players(Set<PeerID>)
    /// Hides the game from every device's list (`true`), or shows it again
    /// (`false`); the op with the greatest stamp wins.
    case archive(Bool)
    /// Creates a private game: its players with the game key sealed to
    /// each, and its genesis sealed with that key.
    indirect case privateGenesis(PrivateGenesis)
    /// A move in a private game: a reveal, mark, assisted or archive
    /// payload (kind ‖ payload) sealed with the game key.
    case sealed([UInt8])
    /// Lets more devices move in a private game, with the game key sealed
    /// to each (the creator's alone).
    case privatePlayers([SealedKey])
    /// Reveals the cells a reveal or chord opens, given as the cell clicked
    /// and the exceptions to its flood (every replica computes the cells
    /// from the layout).
    case flood(Flood)
    /// The author asked for a hint and was shown `cell`: the game counts as
    /// assisted, and who asked how often is known everywhere.
    case hint(cell: Int)
    /// The creator chose the game's seed (`new --seed`), so the layout can
    /// be printed beforehand: a practice game, kept out of records (the
    /// creator's alone).
    case seeded
    /// The creator says the game is the board of the day `day` (days since
    /// 1970-01-01 by the creator's calendar), the same for every member of
    /// the circle (``DailyBoard``): the creator's alone, counted only when
    /// the layout is that day's.
    case daily(day: Int)
    /// The author gives up its board in a race: its part ends, lost, and
    /// its later moves change nothing (a racer's alone, in a race).
    case resign

    /// The kind byte in the encoding.
    public enum Kind: UInt8, Sendable {
        case genesis = 0
        case reveal = 1
        case mark = 2
        case assisted = 3
        case players = 4
        case archive = 5
        case privateGenesis = 6
        case sealed = 7
        case privatePlayers = 8
        case flood = 9
        case hint = 10
        case seeded = 11
        case daily = 12
        case resign = 13
    }

    /// This payload's kind.
    public var kind: Kind {
        switch self {
        case .genesis: .genesis
        case .reveal: .reveal
        case .mark: .mark
        case .assisted: .assisted
        case .players: .players
        case .archive: .archive
        case .privateGenesis: .privateGenesis
        case .sealed: .sealed
        case .privatePlayers: .privatePlayers
        case .flood: .flood
        case .hint: .hint
        case .seeded: .seeded
        case .daily: .daily
        case .resign: .resign
        }
    }

    /// Whether this is a game's genesis (open or private).
    public var isGenesis: Bool { kind == .genesis || kind == .privateGenesis }

    /// The cell the author acted on, when the payload names it: the cell a
    /// flood revealed or chorded on, or the cell a mark is set on. A
    /// ``reveal(_:)`` lists the cells it opens, not the one clicked.
    public var actedCell: Int? {
        switch self {
        case .flood(let flood): flood.cell
        case .mark(let cell, _): cell
        case .hint(let cell): cell
        default: nil
        }
    }

    /// The payload's encoding: kind ‖ payload, as in an op's canonical bytes.
    public var encoded: [UInt8] {
        var w = ByteWriter()
        encode(into: &w)
        return w.bytes
    }

    /// The most bytes a sealed payload may take.
    static let sealedLimit = 1 << 22

    func encode(into w: inout ByteWriter) {
        w.byte(kind.rawValue)
        switch self {
        case .genesis(let g): g.encode(into: &w)
        case .reveal(let runs): runs.encode(into: &w)
        case .mark(let cell, let mark):
            w.varint(cell)
            w.byte(mark.rawValue)
        case .assisted: break
        case .players(let keys): Genesis.encodePlayers(keys, into: &w)
        case .archive(let archived): w.byte(archived ? 1 : 0)
        case .privateGenesis(let g): g.encode(into: &w)
        case .sealed(let box): w.lengthPrefixed(box)
        case .privatePlayers(let keys): SealedKey.encode(keys, into: &w)
        case .flood(let flood): flood.encode(into: &w)
        case .hint(let cell): w.varint(cell)
        case .seeded: break
        case .daily(let day): w.varint(day)
        case .resign: break
        }
    }

    static func decode(from r: inout ByteReader) throws(ByteDecodingError) -> OpPayload {
        let k = try r.byte("op kind")
        guard let kind = Kind(rawValue: k) else { throw .unknownKind(field: "op kind", value: k) }
        switch kind {
        case .genesis:
            return .genesis(try Genesis.decode(from: &r))
        case .reveal:
            return .reveal(try CellRuns.decode(from: &r))
        case .mark:
            let cell = try r.int("mark cell", max: Int.max)
            guard cell < CellRuns.cellLimit else { throw .cellOutOfRange(cell) }
            let m = try r.byte("mark")
            guard let mark = Mark(rawValue: m) else { throw .unknownKind(field: "mark", value: m) }
            return .mark(cell: cell, mark: mark)
        case .assisted:
            return .assisted
        case .players:
            return .players(try Genesis.decodePlayers(from: &r, minimum: 1))
        case .archive:
            let flag = try r.byte("archived")
            guard flag <= 1 else { throw .unknownKind(field: "archived", value: flag) }
            return .archive(flag == 1)
        case .privateGenesis:
            return .privateGenesis(try PrivateGenesis.decode(from: &r))
        case .sealed:
            return .sealed(try r.lengthPrefixed("sealed payload", max: sealedLimit))
        case .privatePlayers:
            return .privatePlayers(try SealedKey.decode(from: &r, minimum: 1, maximum: Genesis.playerLimit))
        case .flood:
            return .flood(try Flood.decode(from: &r))
        case .hint:
            let cell = try r.int("hint cell", max: Int.max)
            guard cell < CellRuns.cellLimit else { throw .cellOutOfRange(cell) }
            return .hint(cell: cell)
        case .seeded:
            return .seeded
        case .daily:
            return .daily(day: try r.int("daily day", max: DailyBoard.dayLimit))
        case .resign:
            return .resign
        }
    }

    /// The largest cell this payload names plus one (0 when none): it must
    /// not pass the game's cell count.
    var cellUpperBound: Int {
        switch self {
        case .genesis, .assisted, .players, .archive, .privateGenesis, .sealed, .privatePlayers, .seeded, .daily, .resign: 0
        case .hint(let cell): cell + 1
        case .reveal(let runs): runs.upperBound
        case .mark(let cell, _): cell + 1
        case .flood(let flood): flood.upperBound
        }
    }
}

/// One signed change to one game.
///
/// The canonical encoding (version 1), which is hashed and signed:
///
///     version (1 byte, = 1) ‖ game id (16) ‖ author key (32) ‖ seq (LEB128)
///     ‖ Lamport time (LEB128) ‖ previous op hash (32; zeros when seq = 1)
///     ‖ wall clock ms (LEB128) ‖ membership proof (16) ‖ kind (1) ‖ payload
///
/// The signature is Ed25519 over `"sweeper/op/v1\0"` ‖ canonical bytes; the
/// op's ``hash`` is BLAKE2b-256 over `"sweeper/op-hash/v1\0"` ‖ canonical
/// bytes. The hash does not cover the signature, so the newest op's
/// signature vouches for the whole chain behind it.
public struct Op: Hashable, Sendable {
    /// The version byte of the canonical encoding.
    public static let version: UInt8 = 1
    /// The greatest Lamport time a replica accepts (2^53). A game's clock
    /// grows by one per op, so no real game comes near it; a peer's op that
    /// claims more is refused (``OpRejection/lamportOutOfRange``), so that
    /// the next op's time (one more) always fits, in 64 bits and in SQLite.
    public static let lamportLimit: UInt64 = 1 << 53
    /// The most an op's Lamport time may lead the greatest Lamport time of
    /// its game's ops that the receiving replica holds: 2^24. An honest
    /// author's time is one more than the greatest it has seen, so it leads
    /// what a replica holds by at most the number of ops that replica
    /// lacks: only a game of 16 million ops would come near the bound.
    /// Without it one op from a member could claim ``lamportLimit`` and
    /// leave no room for anyone's next move; with it, getting there takes
    /// 2^29 ops. An op refused for leading too far is taken when offered
    /// again once the replica holds more (the next summary exchange), so
    /// replicas that come to hold the same ops decide alike.
    public static let lamportLead: UInt64 = 1 << 24

    /// Whether this op's Lamport time is within ``lamportLimit`` and leads
    /// `held` (the greatest Lamport time of its game's ops held) by at most
    /// ``lamportLead``.
    func lamportFits(holding held: UInt64) -> Bool {
        lamport <= Self.lamportLimit && lamport - min(lamport, held) <= Self.lamportLead
    }
    static let signatureDomain = Array("sweeper/op/v1\0".utf8)
    static let hashDomain = Array("sweeper/op-hash/v1\0".utf8)

    /// An op's fields, held once: an op is copied into chains, waiting
    /// lists, outcomes and messages, and a copy of a struct of eight
    /// buffers costs eight reference counts where this costs one.
    private final class Storage: Sendable {
        let gameID: GameID
        let author: PeerID
        let seq: UInt64
        let lamport: UInt64
        let previous: OpHash
        let wallClockMillis: UInt64
        let membershipProof: [UInt8]
        let payload: OpPayload
        let signature: Signature?
        let hash: OpHash
        /// Whether the signature was found the author's: 0 not checked yet,
        /// 1 yes, 2 no. Kept so that a check made on another thread (a big
        /// message checked before its turn) is not made again.
        let verdict = Atomic<UInt8>(0)

        init(
            gameID: GameID, author: PeerID, seq: UInt64, lamport: UInt64, previous: OpHash, wallClockMillis: UInt64,
            membershipProof: [UInt8], payload: OpPayload, signature: Signature?, hash: OpHash
        ) {
            self.gameID = gameID
            self.author = author
            self.seq = seq
            self.lamport = lamport
            self.previous = previous
            self.wallClockMillis = wallClockMillis
            self.membershipProof = membershipProof
            self.payload = payload
            self.signature = signature
            self.hash = hash
        }
    }

    private let storage: Storage

    /// The game this op belongs to.
    public var gameID: GameID { storage.gameID }
    /// Who made it.
    public var author: PeerID { storage.author }
    /// The author's sequence number in this game: 1, 2, 3, …
    public var seq: UInt64 { storage.seq }
    /// Lamport time: greater than every op the author had seen.
    public var lamport: UInt64 { storage.lamport }
    /// The hash of the author's previous op in this game (``OpHash/none`` for seq 1).
    public var previous: OpHash { storage.previous }
    /// The author's wall clock when made, ms since 1970 (informative only).
    public var wallClockMillis: UInt64 { storage.wallClockMillis }
    /// Keyed BLAKE2b of the author key under the circle key (``CircleKey/membershipProof(for:)``).
    public var membershipProof: [UInt8] { storage.membershipProof }
    /// What the op does.
    public var payload: OpPayload { storage.payload }
    /// The author's signature; may be absent on ops that arrived inside a
    /// chain segment, which is vouched for by the signature of its last op.
    public var signature: Signature? { storage.signature }

    /// The canonical encoding (hashed and signed), made again at each use:
    /// an op is hashed once, when made or decoded, and its signature is
    /// checked once, so holding these bytes (about 150 with their buffer)
    /// beside every op of a long game would cost more than making them.
    public var canonicalBytes: [UInt8] {
        Self.canonicalBytes(
            gameID: gameID, author: author, seq: seq, lamport: lamport, previous: previous, wallClockMillis: wallClockMillis,
            membershipProof: membershipProof, payload: payload)
    }

    private static func canonicalBytes(
        gameID: GameID, author: PeerID, seq: UInt64, lamport: UInt64, previous: OpHash, wallClockMillis: UInt64,
        membershipProof: [UInt8], payload: OpPayload
    ) -> [UInt8] {
        var w = ByteWriter(capacity: 128)
        w.byte(version)
        w.append(gameID.bytes)
        w.append(author.bytes)
        w.varint(seq)
        w.varint(lamport)
        w.append(previous.bytes)
        w.varint(wallClockMillis)
        w.append(membershipProof)
        payload.encode(into: &w)
        return w.bytes
    }
    /// The op's hash.
    public var hash: OpHash { storage.hash }

    /// (Lamport, author): the total order used for last-writer-wins and first reveals.
    public var stamp: Stamp { Stamp(lamport: lamport, author: author) }

    init(
        gameID: GameID, author: PeerID, seq: UInt64, lamport: UInt64, previous: OpHash, wallClockMillis: UInt64,
        membershipProof: [UInt8], payload: OpPayload, signature: Signature?
    ) {
        let canonicalBytes = Self.canonicalBytes(
            gameID: gameID, author: author, seq: seq, lamport: lamport, previous: previous, wallClockMillis: wallClockMillis,
            membershipProof: membershipProof, payload: payload)
        storage = Storage(
            gameID: gameID, author: author, seq: seq, lamport: lamport, previous: previous, wallClockMillis: wallClockMillis,
            membershipProof: membershipProof, payload: payload, signature: signature,
            hash: OpHash(unchecked: Blake2b.hash(Self.hashDomain, canonicalBytes, length: 32)))
    }

    /// Makes and signs an op (the signing identity is the author).
    init(
        signing identity: SigningIdentity, circle: CircleKey, gameID: GameID, seq: UInt64, lamport: UInt64,
        previous: OpHash, wallClockMillis: UInt64, payload: OpPayload
    ) {
        let proof = circle.membershipProof(for: identity.peerID)
        let canonicalBytes = Self.canonicalBytes(
            gameID: gameID, author: identity.peerID, seq: seq, lamport: lamport, previous: previous,
            wallClockMillis: wallClockMillis, membershipProof: proof, payload: payload)
        storage = Storage(
            gameID: gameID, author: identity.peerID, seq: seq, lamport: lamport, previous: previous,
            wallClockMillis: wallClockMillis, membershipProof: proof, payload: payload,
            signature: identity.sign(Self.signatureDomain + canonicalBytes),
            hash: OpHash(unchecked: Blake2b.hash(Self.hashDomain, canonicalBytes, length: 32)))
        // The signature is the author's by construction: a signing identity's
        // halves were checked to match when it was made or loaded, and an
        // Ed25519 signature made with matching halves verifies. Checking it
        // again would cost a move a verification on its way to the peers.
        storage.verdict.store(1, ordering: .relaxed)
    }

    /// The same op with `signature` attached (or removed).
    func with(signature: Signature?) -> Op {
        Op(
            storage: Storage(
                gameID: gameID, author: author, seq: seq, lamport: lamport, previous: previous, wallClockMillis: wallClockMillis,
                membershipProof: membershipProof, payload: payload, signature: signature, hash: hash))
    }

    private init(storage: Storage) {
        self.storage = storage
    }

    /// Whether the op carries a valid signature by its author.
    public var hasValidSignature: Bool {
        guard let signature else { return false }
        switch storage.verdict.load(ordering: .relaxed) {
        case 1: return true
        case 2: return false
        default:
            let valid = author.isValidSignature(signature, of: Self.signatureDomain + canonicalBytes)
            storage.verdict.store(valid ? 1 : 2, ordering: .relaxed)
            return valid
        }
    }

    /// Ops are equal when their canonical bytes are (the signature aside).
    public static func == (lhs: Op, rhs: Op) -> Bool { lhs.hash == rhs.hash }

    public func hash(into hasher: inout Hasher) { hasher.combine(hash) }

    // MARK: Standalone encoding (storage, and single ops)

    /// The op as stored: canonical bytes ‖ signature flag (0 or 1) ‖ signature (64, when flagged).
    public var encoded: [UInt8] {
        var out = canonicalBytes
        if let signature {
            out.append(1)
            out.append(contentsOf: signature.bytes)
        } else {
            out.append(0)
        }
        return out
    }

    /// Decodes ``encoded`` bytes, rejecting unknown versions, bad lengths,
    /// out-of-range values and trailing bytes. Does not verify anything:
    /// that is the ``Replica``'s job.
    public init(decoding bytes: [UInt8]) throws(ByteDecodingError) {
        var r = ByteReader(bytes)
        let version = try r.byte("version")
        guard version == Self.version else { throw .unknownVersion(version) }
        let game = GameID(unchecked: try r.take(GameID.byteCount, "game id"))
        let author = try PeerID.fromDecoded(try r.take(PeerID.byteCount, "author key"))
        let seq = try r.varint("seq")
        guard seq >= 1 else { throw .valueOutOfRange(field: "seq", value: seq) }
        let lamport = try r.varint("Lamport time")
        guard lamport >= 1 else { throw .valueOutOfRange(field: "Lamport time", value: lamport) }
        let previous = OpHash(unchecked: try r.take(OpHash.byteCount, "previous hash"))
        let wall = try r.varint("wall clock")
        let proof = try r.take(CircleKey.proofByteCount, "membership proof")
        let payload = try OpPayload.decode(from: &r)
        let flag = try r.byte("signature flag")
        var signature: Signature?
        switch flag {
        case 0: signature = nil
        case 1: signature = Signature(bytes: try r.take(Signature.byteCount, "signature"))
        default: throw .unknownKind(field: "signature flag", value: flag)
        }
        try r.expectEnd()
        self.init(
            gameID: game, author: author, seq: seq, lamport: lamport, previous: previous, wallClockMillis: wall,
            membershipProof: proof, payload: payload, signature: signature)
    }
}

/// The order of ops for last-writer-wins and "who revealed first":
/// Lamport time, then the author key's bytes.
public struct Stamp: Hashable, Comparable, Sendable {
    /// Lamport time.
    public let lamport: UInt64
    /// The author.
    public let author: PeerID

    /// Creates a stamp.
    public init(lamport: UInt64, author: PeerID) {
        self.lamport = lamport
        self.author = author
    }

    public static func < (a: Stamp, b: Stamp) -> Bool {
        a.lamport != b.lamport ? a.lamport < b.lamport : a.author < b.author
    }
}

extension PeerID {
    /// A key read by a decoder (`ByteReader.take` returns exactly 32 bytes).
    static func fromDecoded(_ bytes: [UInt8]) throws(ByteDecodingError) -> PeerID {
        do {
            return try PeerID(bytes: bytes)
        } catch {
            throw .truncated(field: "author key")
        }
    }
}
