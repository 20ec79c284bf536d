import SweeperConventions
import SweeperCrypto

/// A message between two peers' sync sessions. Transport-free: the network
/// layer frames and encrypts the ``encoded`` bytes.
///
/// Encoding: version (1 byte, = 1) ‖ type (1 byte) ‖ body.
/// - `summary` (0): flags (bit 0: answer with your summary; bit 1: a part,
///   more follow) ‖ game count ‖ per game: id (16) ‖ author count ‖ per
///   author: key (32) ‖ seq (LEB128). A summary too big for one message goes
///   in parts (``summaryPart(_:)``, bit 1 set, bit 0 clear) and ends with an
///   ordinary summary: the receiver takes them together as one. Parts go
///   only to peers whose hello says peer protocol 10 or later.
/// - `ops` (1): segment count ‖ segments (``OpSegment``).
/// - `interest` (2): kind (0: every game but the listed, 1: only the
///   listed) ‖ game count ‖ game ids (16 each), ascending. Sent only to
///   peers whose hello says peer protocol 5 or later.
/// - `live` (3): ``LiveOp``s, one after the other to the end of the message
///   (at least one).
/// - `heads` (4): count ‖ ``HeadSignature``s.
/// - `unsigned` (5): count ‖ per chain: game id (16) ‖ author (32) ‖ seq (LEB128).
/// - `describe` (6): count ‖ game ids (16 each), ascending: games the
///   sender saw in the receiver's summary and does not hold.
/// - `descriptions` (7): count ‖ ``GameDescription``s: the answer, for the
///   open games among them that the receiver holds.
/// - `chains` (8): segment count ‖ ``LinkSegment``s: ops as `ops` carries
///   them, in the link's compact form.
///
/// Types 3 to 5 go only to peers whose hello says peer protocol 8 or
/// later; types 6 and 7 only to peers whose hello says 11 or later; type 8
/// only to peers whose hello says 15 or later.
public enum SyncMessage: Sendable, Hashable {
    /// What the sender holds: a version vector per game. `wantsReply` asks
    /// the receiver to send its own summary back.
    case summary([GameID: VersionVector], wantsReply: Bool)
    /// Part of a summary too big for one message: more parts follow, and
    /// the summary that ends them completes it (``parts(of:wantsReply:byteBudget:)``).
    case summaryPart([GameID: VersionVector])
    /// Ops, as per-author chain segments.
    case ops([OpSegment])
    /// Which games the sender takes: the receiver sends it only those,
    /// until the next interest.
    case interest(GameInterest)
    /// The sender's own new ops, as live pushes: applied at once on the
    /// strength of the link's handshake, vouched for by a signature later.
    case live([LiveOp])
    /// Signatures of ops the receiver holds (chain heads).
    case heads([HeadSignature])
    /// Chains whose newest ops the sender holds without a signature: a
    /// peer that holds their signatures sends them (``heads(_:)``).
    case unsigned([ChainHead])
    /// Games the sender saw in the receiver's summary and does not hold:
    /// the receiver answers with ``descriptions(_:)`` of those it can describe.
    case describe([GameID])
    /// What the sender tells of open games it holds that the receiver asked about.
    case descriptions([GameDescription])
    /// Ops, as per-author chain segments in the link's compact form: what
    /// a session sends a peer of protocol 15 instead of ``ops(_:)``.
    case chains([LinkSegment])

    /// The format version.
    public static let version: UInt8 = 1
    /// The largest encoded message accepted (32 MiB).
    public static let byteLimit = 32 << 20
    /// The most games in one summary message.
    public static let gameLimit = 100_000
    /// The most games in a summary sent in parts, over all of them.
    public static let partedGameLimit = 1_000_000
    /// The most authors per game in one summary.
    public static let authorLimit = 4_096
    /// The most segments in one message.
    public static let segmentLimit = 100_000
    /// The most games one ``describe(_:)`` or ``descriptions(_:)`` names.
    public static let describeLimit = 256

    /// The encoded message.
    public var encoded: [UInt8] {
        var w = ByteWriter(capacity: 256)
        w.byte(Self.version)
        switch self {
        case .summary(let games, let wantsReply):
            Self.encode(summary: games, flags: wantsReply ? 1 : 0, into: &w)
        case .summaryPart(let games):
            Self.encode(summary: games, flags: 2, into: &w)
        case .ops(let segments):
            w.byte(1)
            w.varint(segments.count)
            for s in segments { s.encode(into: &w) }
        case .interest(let interest):
            w.byte(2)
            interest.encode(into: &w)
        case .live(let ops):
            w.byte(3)
            for op in ops { op.encode(into: &w) }
        case .heads(let heads):
            w.byte(4)
            w.varint(heads.count)
            for h in heads { h.encode(into: &w) }
        case .unsigned(let chains):
            w.byte(5)
            w.varint(chains.count)
            for c in chains {
                w.append(c.game.bytes)
                w.append(c.author.bytes)
                w.varint(c.seq)
            }
        case .describe(let games):
            w.byte(6)
            w.varint(games.count)
            for id in games.sorted() { w.append(id.bytes) }
        case .descriptions(let descriptions):
            w.byte(7)
            w.varint(descriptions.count)
            for d in descriptions { d.encode(into: &w) }
        case .chains(let segments):
            w.byte(8)
            w.varint(segments.count)
            for s in segments { s.encode(into: &w) }
        }
        return w.bytes
    }

    private static func encode(summary games: [GameID: VersionVector], flags: UInt8, into w: inout ByteWriter) {
        w.byte(0)
        w.byte(flags)
        w.varint(games.count)
        for (id, vector) in games.sorted(by: { $0.key < $1.key }) {
            w.append(id.bytes)
            w.varint(vector.heads.count)
            for (author, seq) in vector.heads.sorted(by: { $0.key < $1.key }) {
                w.append(author.bytes)
                w.varint(seq)
            }
        }
    }

    /// The bytes one game takes in a summary.
    static func summaryBytes(of vector: VersionVector) -> Int {
        var n = GameID.byteCount + ByteWriter.varintSize(UInt64(vector.heads.count))
        for seq in vector.heads.values { n += PeerID.byteCount + ByteWriter.varintSize(seq) }
        return n
    }

    /// A summary as messages of at most `byteBudget` bytes and
    /// ``gameLimit`` games each: parts (``summaryPart(_:)``), games in
    /// ascending order, then the summary that ends them. One message when
    /// it fits.
    public static func parts(of games: [GameID: VersionVector], wantsReply: Bool, byteBudget: Int) -> [SyncMessage] {
        parts(of: games, wantsReply: wantsReply, byteBudget: byteBudget, firstOnly: false)
    }

    private static func parts(of games: [GameID: VersionVector], wantsReply: Bool, byteBudget: Int, firstOnly: Bool) -> [SyncMessage] {
        var messages: [SyncMessage] = []
        var part: [GameID: VersionVector] = [:]
        var size = 3
        for (id, vector) in games.sorted(by: { $0.key < $1.key }) {
            let one = summaryBytes(of: vector)
            if !part.isEmpty && (size + one + 5 > byteBudget || part.count >= gameLimit) {
                if firstOnly { return [.summary(part, wantsReply: wantsReply)] }
                messages.append(.summaryPart(part))
                part = [:]
                size = 3
            }
            part[id] = vector
            size += one
        }
        messages.append(.summary(part, wantsReply: wantsReply))
        return messages
    }

    /// The first games of a summary, in ascending order, that fit one
    /// message of at most `byteBudget` bytes and ``gameLimit`` games: what
    /// a peer that does not take summaries in parts is sent.
    public static func truncated(_ games: [GameID: VersionVector], wantsReply: Bool, byteBudget: Int) -> SyncMessage {
        parts(of: games, wantsReply: wantsReply, byteBudget: byteBudget, firstOnly: true).first ?? .summary([:], wantsReply: wantsReply)
    }

    /// Decodes a message, refusing oversized input, unknown versions and
    /// types, bad lengths and trailing bytes.
    public init(decoding bytes: [UInt8]) throws(ByteDecodingError) {
        guard bytes.count <= Self.byteLimit else { throw .tooLarge(field: "sync message", limit: Self.byteLimit) }
        var r = ByteReader(bytes)
        let version = try r.byte("version")
        guard version == Self.version else { throw .unknownVersion(version) }
        let type = try r.byte("message type")
        switch type {
        case 0:
            let flags = try r.byte("summary flags")
            // Bits 0 and 1 are never both set: a part asks nothing.
            guard flags & ~3 == 0, flags != 3 else { throw .reservedBitsSet(field: "summary flags") }
            let gameCount = try r.int("game count", max: Self.gameLimit)
            var games: [GameID: VersionVector] = [:]
            for _ in 0..<gameCount {
                let id = GameID(unchecked: try r.take(GameID.byteCount, "game id"))
                let authorCount = try r.int("author count", max: Self.authorLimit)
                var heads: [PeerID: UInt64] = [:]
                for _ in 0..<authorCount {
                    let author = try PeerID.fromDecoded(try r.take(PeerID.byteCount, "author key"))
                    heads[author] = try r.varint("seq")
                }
                games[id] = VersionVector(heads: heads)
            }
            try r.expectEnd()
            self = flags & 2 != 0 ? .summaryPart(games) : .summary(games, wantsReply: flags & 1 != 0)
        case 1:
            let segments = try r.list("segment count", max: Self.segmentLimit, OpSegment.decode(from:))
            try r.expectEnd()
            self = .ops(segments)
        case 2:
            let interest = try GameInterest.decode(from: &r)
            try r.expectEnd()
            self = .interest(interest)
        case 3:
            var ops: [LiveOp] = []
            repeat {
                ops.append(try LiveOp.decode(from: &r))
            } while r.remaining > 0
            self = .live(ops)
        case 4:
            // A head takes at least 66 bytes: a count the input cannot hold is refused before reading on.
            let heads = try r.list("head count", max: r.remaining / 66, HeadSignature.decode(from:))
            try r.expectEnd()
            self = .heads(heads)
        case 5:
            let count = try r.int("chain count", max: r.remaining / 49)
            var chains: [ChainHead] = []
            chains.reserveCapacity(count)
            for _ in 0..<count {
                let game = GameID(unchecked: try r.take(GameID.byteCount, "game id"))
                let author = try PeerID.fromDecoded(try r.take(PeerID.byteCount, "author key"))
                let seq = try r.varint("seq")
                guard seq >= 1 else { throw .valueOutOfRange(field: "seq", value: seq) }
                chains.append(ChainHead(game: game, author: author, seq: seq))
            }
            try r.expectEnd()
            self = .unsigned(chains)
        case 6:
            let count = try r.int("game count", max: Self.describeLimit)
            var games: [GameID] = []
            for _ in 0..<count {
                let id = GameID(unchecked: try r.take(GameID.byteCount, "game id"))
                guard games.last.map({ $0 < id }) ?? true else { throw .unordered(field: "game ids") }
                games.append(id)
            }
            try r.expectEnd()
            self = .describe(games)
        case 7:
            let descriptions = try r.list("description count", max: Self.describeLimit, GameDescription.decode(from:))
            try r.expectEnd()
            self = .descriptions(descriptions)
        case 8:
            let segments = try r.list("segment count", max: Self.segmentLimit, LinkSegment.decode(from:))
            try r.expectEnd()
            self = .chains(segments)
        default:
            throw .unknownKind(field: "message type", value: type)
        }
    }
}

extension SyncMessage {
    /// A message of at least this many bytes is worth decoding and checking
    /// (``checkSignatures()``) on another thread before its turn: some 80
    /// ops' worth. A catch-up of thousands of segments, or a summary part
    /// of 100,000 games, would otherwise hold its handler for hundreds of
    /// milliseconds.
    public static let offLoopBytes = 16_384

    /// Checks now the signatures that handling this message checks (each
    /// segment's newest op, which vouches for those before it), so that a
    /// big message checked on another thread before its turn finds them
    /// checked when the replica takes it (``Op/hasValidSignature`` keeps
    /// the verdict).
    public func checkSignatures() {
        guard case .ops(let segments) = self else { return }
        for segment in segments { _ = segment.ops.last?.hasValidSignature }
    }
}
