import SweeperConventions
import SweeperCrypto
import SweeperGame

/// A game's state written down whole, so that a sleeping game wakes by
/// reading it back instead of applying every op again (see
/// ``GameReplica/frozenBoard(minimumOps:)``). Everything the state holds is written,
/// in one order (sets and maps sorted by key), so the same state always
/// gives the same bytes; the genesis is not: it comes back from the
/// genesis op, which the store holds.
///
/// Layout: a flag byte (seeded, hints, daily, roles, floods, private, and
/// whether a day, players, an archive register, lanes or a resign follow)
/// ‖ the authors (count ‖ keys, in the order their numbers give) ‖ the
/// board ‖ the reveal stamps (count ‖ (Lamport ‖ author number ‖ wall
/// clock)…) ‖ the first reveals (count ‖ (cell ‖ entry)…, cells
/// ascending) ‖ the mark registers (count ‖ (cell ‖ Lamport ‖ author
/// number)…) ‖ who peeked (count ‖ (key ‖ wall clock ‖ stamp)…) ‖ the
/// hints (count ‖ (key ‖ count)…) ‖ then, when flagged, the day and its
/// stamp, the players, the archive register, each racer's lane (count ‖
/// (key ‖ state)…) and the resign's wall clock. Every number is a LEB128
/// varint; a key is 32 bytes.
extension GameState {
    /// Writes the state (the genesis aside) into `w`.
    func freeze(into w: inout ByteWriter) {
        var flags: UInt16 = 0
        for (bit, on) in [isSeeded, usesHints, usesDaily, usesRoles, usesFloods, isPrivate].enumerated() where on { flags |= 1 << bit }
        for (bit, present) in [dailyDay != nil, players != nil, archiveRegister != nil, lanes != nil, gaveUpMillis != nil].enumerated()
        where present {
            flags |= 1 << (bit + 6)
        }
        w.varint(UInt64(flags))
        w.varint(authors.count)
        for author in authors { w.append(author.bytes) }
        Self.freeze(board.parts, into: &w)
        w.varint(revealStamps.count)
        for i in 0..<revealStamps.count {
            let s = revealStamps[i]
            w.varint(s.lamport)
            w.varint(UInt64(s.author))
            w.varint(s.wall)
        }
        var reveals: [(Int32, UInt32)] = []
        firstReveals.forEach { reveals.append(($0, $1)) }
        reveals.sort { $0.0 < $1.0 }
        w.varint(reveals.count)
        for (cell, entry) in reveals {
            w.varint(UInt64(cell))
            w.varint(UInt64(entry))
        }
        w.varint(markRegisters.count)
        for (cell, register) in markRegisters.sorted(by: { $0.key < $1.key }) {
            w.varint(UInt64(cell))
            w.varint(register.lamport)
            w.varint(UInt64(register.author))
        }
        w.varint(peeks.count)
        for (peer, wall) in peeks.sorted(by: { $0.key < $1.key }) {
            w.append(peer.bytes)
            w.varint(wall)
            Self.freeze(peekStamps[peer] ?? Stamp(lamport: 0, author: peer), into: &w)
        }
        w.varint(hintsBy.count)
        for (peer, count) in hintsBy.sorted(by: { $0.key < $1.key }) {
            w.append(peer.bytes)
            w.varint(count)
        }
        if let dailyDay {
            w.varint(dailyDay)
            Self.freeze(dailyStamp ?? genesisStamp, into: &w)
        }
        if let players { Self.freeze(peers: players, into: &w) }
        if let archiveRegister {
            Self.freeze(archiveRegister.stamp, into: &w)
            w.byte(archiveRegister.archived ? 1 : 0)
        }
        if let lanes {
            w.varint(lanes.count)
            for (racer, lane) in lanes.sorted(by: { $0.key < $1.key }) {
                w.append(racer.bytes)
                lane.freeze(into: &w)
            }
        }
        if let gaveUpMillis { w.varint(gaveUpMillis) }
    }

    /// The state `r` holds next (written by ``freeze(into:)``) of the game
    /// `genesisOp` began with `genesis`; throws when it does not decode or
    /// does not fit the game (a cell past the board, an author number or
    /// reveal entry that names nothing).
    init(thawing r: inout ByteReader, genesisOp: Op, genesis: Genesis, isLane: Bool = false) throws(ByteDecodingError) {
        self.init(genesisOp: genesisOp, genesis: genesis, isLane: isLane)
        let cells = genesis.geometry.cellCount
        let flags = try r.int("state flags", max: 1 << 11 - 1)
        let on = { (bit: Int) in flags & (1 << bit) != 0 }
        isSeeded = on(0)
        usesHints = on(1)
        usesDaily = on(2)
        usesRoles = on(3)
        usesFloods = on(4)
        isPrivate = on(5)
        authors = try r.list("authors", max: 1 << 16) { (r: inout ByteReader) throws(ByteDecodingError) in try Self.thawPeer(&r) }
        guard authors.first == genesisOp.author else { throw .invalid(field: "authors", reason: "the creator is not the first") }
        authorIndex = Dictionary(authors.enumerated().map { ($0.element, Int32($0.offset)) }, uniquingKeysWith: { a, _ in a })
        guard authorIndex.count == authors.count else { throw .invalid(field: "authors", reason: "an author twice") }
        lastAuthor = -1
        let authorCount = authors.count
        func author(_ r: inout ByteReader) throws(ByteDecodingError) -> Int32 { Int32(try r.int("author number", max: authorCount - 1)) }
        guard let board = Board(layout: genesis.layout, questionMarks: genesis.questionMarks, parts: try Self.thawBoard(&r, cells: cells))
        else { throw .invalid(field: "board", reason: "does not fit the layout") }
        self.board = board
        let stampCount = try r.int("reveal stamps", max: Int(UInt32.max))
        var stamps = ChunkedArray<RevealStamp>()
        for _ in 0..<stampCount {
            stamps.append(RevealStamp(lamport: try r.varint("reveal Lamport"), author: try author(&r), wall: try r.varint("reveal wall clock")))
        }
        guard stamps.count >= 1 else { throw .invalid(field: "reveal stamps", reason: "none") }
        revealStamps = stamps
        var entries = CellEntries(cellCount: cells)
        let revealCount = try r.int("first reveals", max: cells)
        var previous = -1
        for _ in 0..<revealCount {
            let cell = try r.int("first reveal cell", max: cells - 1)
            guard cell > previous else { throw .unordered(field: "first reveals") }
            previous = cell
            entries[Int32(cell)] = UInt32(try r.int("first reveal entry", max: stampCount - 1))
        }
        firstReveals = entries
        let markCount = try r.int("mark registers", max: cells)
        var registers: [Int32: MarkRegister] = [:]
        registers.reserveCapacity(markCount)
        for _ in 0..<markCount {
            let cell = Int32(try r.int("mark cell", max: cells - 1))
            registers[cell] = MarkRegister(lamport: try r.varint("mark Lamport"), author: try author(&r))
        }
        guard registers.count == markCount else { throw .unordered(field: "mark registers") }
        markRegisters = registers
        for _ in 0..<(try r.int("peeks", max: 1 << 16)) {
            let peer = try Self.thawPeer(&r)
            assistedBy.insert(peer)
            peeks[peer] = try r.varint("peek wall clock")
            peekStamps[peer] = try Self.thawStamp(&r)
        }
        for _ in 0..<(try r.int("hints", max: 1 << 16)) { hintsBy[try Self.thawPeer(&r)] = try r.int("hint count", max: Int(Int32.max)) }
        if on(6) {
            dailyDay = try r.int("day", max: Int(Int32.max))
            dailyStamp = try Self.thawStamp(&r)
        }
        players = on(7) ? try Self.thawPeers(&r) : nil
        if on(8) {
            let stamp = try Self.thawStamp(&r)
            archiveRegister = (stamp, try r.byte("archived") != 0)
        }
        if on(9) {
            guard !isLane else { throw .invalid(field: "lanes", reason: "a lane of a lane") }
            var thawed: [PeerID: GameState] = [:]
            for _ in 0..<(try r.int("lanes", max: Genesis.playerLimit)) {
                let racer = try Self.thawPeer(&r)
                thawed[racer] = try GameState(thawing: &r, genesisOp: genesisOp, genesis: genesis, isLane: true)
            }
            guard Set(thawed.keys) == Set(lanes.map { Array($0.keys) } ?? []) else { throw .invalid(field: "lanes", reason: "not the racers") }
            lanes = thawed
        } else {
            lanes = nil
        }
        gaveUpMillis = on(10) ? try r.varint("resign wall clock") : nil
    }

    private static func freeze(_ parts: Board.Parts, into w: inout ByteWriter) {
        if parts.revealedBits.isEmpty {
            w.byte(0)
            w.varint(parts.revealedCells.count)
            for cell in parts.revealedCells.sorted() { w.varint(UInt64(cell)) }
        } else {
            w.byte(1)
            w.varint(parts.revealedBits.count)
            for word in parts.revealedBits { w.uint64(word) }
        }
        w.varint(parts.marks.count)
        for (cell, mark) in parts.marks.sorted(by: { $0.key < $1.key }) {
            w.varint(UInt64(cell))
            w.byte(mark.rawValue)
        }
        w.varint(parts.revealedSafeCount)
        w.varint(parts.flagCount)
        w.varint(parts.detonatedMine.map { UInt64($0) + 1 } ?? 0)
    }

    private static func thawBoard(_ r: inout ByteReader, cells: Int) throws(ByteDecodingError) -> Board.Parts {
        var bits: [UInt64] = [], revealed = Set<Int32>()
        switch try r.byte("revealed form") {
        case 0:
            let count = try r.int("revealed cells", max: cells)
            revealed.reserveCapacity(count)
            for _ in 0..<count { revealed.insert(Int32(try r.int("revealed cell", max: cells - 1))) }
        case 1:
            let words = try r.int("revealed words", max: (cells + 63) / 64)
            bits.reserveCapacity(words)
            for _ in 0..<words { bits.append(try r.uint64("revealed word")) }
        case let other:
            throw .unknownKind(field: "revealed form", value: other)
        }
        var marks: [Int32: Mark] = [:]
        for _ in 0..<(try r.int("marks", max: cells)) {
            let cell = Int32(try r.int("marked cell", max: cells - 1))
            let raw = try r.byte("mark")
            guard let mark = Mark(rawValue: raw) else { throw .unknownKind(field: "mark", value: raw) }
            marks[cell] = mark
        }
        let safe = try r.int("revealed safe cells", max: cells), flags = try r.int("flags", max: cells)
        let detonated = try r.int("detonated mine", max: cells)
        return Board.Parts(
            revealedBits: bits, revealedCells: revealed, marks: marks, revealedSafeCount: safe, flagCount: flags,
            detonatedMine: detonated == 0 ? nil : detonated - 1)
    }

    private static func freeze(_ stamp: Stamp, into w: inout ByteWriter) {
        w.varint(stamp.lamport)
        w.append(stamp.author.bytes)
    }

    private static func thawStamp(_ r: inout ByteReader) throws(ByteDecodingError) -> Stamp {
        Stamp(lamport: try r.varint("stamp Lamport"), author: try thawPeer(&r))
    }

    private static func freeze(peers: Set<PeerID>, into w: inout ByteWriter) {
        w.varint(peers.count)
        for peer in peers.sorted() { w.append(peer.bytes) }
    }

    private static func thawPeers(_ r: inout ByteReader) throws(ByteDecodingError) -> Set<PeerID> {
        Set(try r.list("peers", max: 1 << 16) { (r: inout ByteReader) throws(ByteDecodingError) in try thawPeer(&r) })
    }

    private static func thawPeer(_ r: inout ByteReader) throws(ByteDecodingError) -> PeerID {
        try PeerID.fromDecoded(try r.take(PeerID.byteCount, "key"))
    }
}
