import SweeperConventions
import SweeperCrypto
import SweeperGame

/// A frozen board: a game that may sleep written down whole (its state,
/// each chain's hash prefixes, who revealed, its greatest Lamport time),
/// so that waking it reads that and each chain's newest ops back instead
/// of replaying every op. The store keeps it beside the game's sleeping
/// form and drops both the moment any op of the game changes; a wake
/// takes it only when it matches the sleeping game (its vector and the
/// heads no signature covers) and the ops read back are the ones it
/// names, and replays the ops otherwise.
///
/// Format 1: the format byte ‖ the game id ‖ the creator's key ‖ the
/// greatest Lamport time ‖ the revealers (count ‖ keys ascending) ‖ the
/// chains (count ‖ (author ‖ length ‖ how many only the store holds ‖
/// each op's hash prefix, 8 bytes)…, authors ascending) ‖ the state (see
/// ``GameState/freeze(into:)``).
extension GameReplica {
    /// The format this build writes and reads.
    public static let frozenBoardFormat: UInt8 = 1
    /// The fewest ops a game holds for a frozen board to be worth its bytes:
    /// a shorter game replays in a few milliseconds.
    public static let frozenBoardMinimumOps = 1_024

    /// The game written down whole, when it may sleep, is an open game (a
    /// private game's key is never written) and holds at least
    /// `minimumOps` ops; `nil` otherwise.
    public func frozenBoard(minimumOps: Int = frozenBoardMinimumOps) -> [UInt8]? {
        guard maySleep, privateHeader == nil, let state, let genesisOp, opCount >= minimumOps else { return nil }
        var w = ByteWriter(capacity: 256 + opCount * 12)
        w.byte(Self.frozenBoardFormat)
        w.append(gameID.bytes)
        w.append(genesisOp.author.bytes)
        w.varint(maxLamport)
        w.varint(revealers.count)
        for peer in revealers.sorted() { w.append(peer.bytes) }
        w.varint(chains.count)
        for (author, chain) in chains.sorted(by: { $0.key < $1.key }) {
            w.append(author.bytes)
            w.varint(chain.count)
            w.varint(chain.archived)
            for seq in stride(from: 1, through: chain.count, by: 1) { w.uint64(chain.hashPrefix(seq: seq).value) }
        }
        state.freeze(into: &w)
        return w.bytes
    }

    /// `game` as `bytes` (a ``frozenBoard(minimumOps:)``) describe it, each chain's
    /// newest ops read back from `archive`; `nil` when the bytes do not
    /// decode, or the ops read back are not the ones they name.
    static func thawed(
        _ bytes: [UInt8], game: GameID, readers: [SigningIdentity], archive: any OpArchive, recentOpsKept: Int
    ) -> GameReplica? {
        var r = ByteReader(bytes)
        do {
            guard try r.byte("format") == frozenBoardFormat, try r.take(GameID.byteCount, "game") == game.bytes else { return nil }
            let creator = try PeerID.fromDecoded(try r.take(PeerID.byteCount, "creator"))
            var thawed = GameReplica(gameID: game, readers: readers, archive: archive, recentOpsKept: recentOpsKept)
            thawed.maxLamport = try r.varint("greatest Lamport time")
            for _ in 0..<(try r.int("revealers", max: 1 << 16)) {
                thawed.revealers.insert(try PeerID.fromDecoded(try r.take(PeerID.byteCount, "revealer")))
            }
            for _ in 0..<(try r.int("chains", max: 1 << 16)) {
                let author = try PeerID.fromDecoded(try r.take(PeerID.byteCount, "author"))
                let count = try r.int("chain length", max: Int(UInt32.max))
                guard count >= 1 else { return nil }
                let archived = try r.int("archived", max: count - 1)
                guard count <= r.remaining / 8 else { return nil }
                var prefixes = ChunkedArray<OpChain.HashPrefix>()
                for _ in 0..<count { prefixes.append(OpChain.HashPrefix(value: try r.uint64("hash prefix"))) }
                let held = try archive.ops(of: game, by: author, seqs: UInt64(archived + 1)...UInt64(count))
                guard thawed.chains[author] == nil, let chain = OpChain(prefixes: prefixes, archived: archived, held: held) else { return nil }
                thawed.chains[author] = chain
            }
            guard let chain = thawed.chains[creator] else { return nil }
            let readGenesis = chain.heldOp(seq: 1) == nil ? try archive.ops(of: game, by: creator, seqs: 1...1).first : nil
            guard let genesisOp = chain.heldOp(seq: 1) ?? readGenesis, genesisOp.seq == 1, chain.hashPrefix(seq: 1) == OpChain.HashPrefix(genesisOp.hash),
                case .genesis(let genesis) = genesisOp.payload, genesis.gameID(creator: creator) == game
            else { return nil }
            thawed.genesisOp = genesisOp
            thawed.state = try GameState(thawing: &r, genesisOp: genesisOp, genesis: genesis)
            try r.expectEnd()
            return thawed
        } catch {
            return nil
        }
    }
}
