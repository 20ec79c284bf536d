// Shared pieces of the fuzz targets: reading the fuzz input, fixed keys and
// games, writing seed inputs.
import CFuzzer
import Foundation
import SweeperCrypto
import SweeperGame

@testable import SweeperSync

/// Reads a fuzz input front to back; past the end every read gives zeros
/// or nothing, so a harness never has to check lengths.
public struct FuzzInput {
    /// The bytes.
    public let bytes: [UInt8]
    /// The read position.
    public private(set) var offset = 0

    /// Wraps the input libFuzzer passes.
    public init(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    }

    /// Wraps bytes.
    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// Whether everything was read.
    public var isAtEnd: Bool { offset >= bytes.count }

    /// The next byte (0 past the end).
    public mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A little-endian 16-bit number.
    public mutating func uint16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }

    /// Up to `count` bytes.
    public mutating func take(_ count: Int) -> [UInt8] {
        let n = max(0, min(count, bytes.count - offset))
        defer { offset += n }
        return Array(bytes[offset..<offset + n])
    }

    /// A chunk: a 16-bit length, then up to that many bytes.
    public mutating func chunk() -> [UInt8] { take(Int(uint16())) }

    /// Everything not read yet.
    public mutating func rest() -> [UInt8] { take(bytes.count - offset) }
}

/// Writes a chunk as ``FuzzInput/chunk()`` reads it.
public func chunk(_ bytes: [UInt8]) -> [UInt8] {
    let n = min(bytes.count, 0xFFFF)
    return [UInt8(n & 0xFF), UInt8(n >> 8)] + bytes.prefix(n)
}

/// Fixed identities, circle and games, so runs are reproducible.
public enum Fixtures {
    /// An identity derived from a number.
    public static func identity(_ n: UInt8) -> SigningIdentity {
        let seed = [UInt8](repeating: n, count: 32)
        // A 32-byte seed is always accepted.
        return (try? SigningIdentity(seed: seed)) ?? SigningIdentity()
    }

    /// The players: ann creates the games, bob and cat join in.
    public static let players: [SigningIdentity] = [identity(1), identity(2), identity(3)]

    /// The circle every fixture belongs to.
    public static let circle: CircleKey = (try? CircleKey(bytes: [UInt8](repeating: 0xC1, count: 32))) ?? CircleKey()

    /// A key for secret streams.
    public static let streamKey = SecretBytes(copying: [UInt8](repeating: 0x5E, count: 32))

    /// An author per player.
    public static let authors: [OpAuthor] = players.map { OpAuthor(identity: $0, circle: circle) }

    /// The genesis of a beginner game made by ann (seed 7).
    public static let genesis: Op = {
        do {
            let p = try GameParameters(width: 9, height: 9, mines: 10)
            return try authors[0].newGame(p, seed: 7, questionMarks: true, createdAtMillis: 1_700_000_000_000)
        } catch {
            fatalError("the fixture game cannot be made: \(error)")  // a harness bug, not a finding
        }
    }()

    /// The genesis of a private game made by ann, bob her other player
    /// (sealed with a fresh key: its bytes and id differ from run to run,
    /// so inputs name games by their place in a list, not by id).
    public static let privateGenesis: Op = {
        do {
            let p = try GameParameters(width: 9, height: 9, mines: 10)
            let board = try Generator.generate(p, seed: 8)
            return try authors[0].privateGenesis(
                parameters: p, layout: board.layout, seed: 8, questionMarks: false, createdAtMillis: 1_700_000_000_500,
                players: [players[1].peerID])
        } catch {
            fatalError("the fixture private game cannot be made: \(error)")  // a harness bug, not a finding
        }
    }()

    /// The genesis of a race made by ann against bob (seed 9): each plays
    /// the layout on a board of their own.
    public static let raceGenesis: Op = {
        do {
            let p = try GameParameters(width: 9, height: 9, mines: 10)
            let board = try Generator.generate(p, seed: 9)
            return try authors[0].genesis(
                parameters: p, layout: board.layout, seed: 9, questionMarks: false, createdAtMillis: 1_700_000_000_700,
                players: [players[1].peerID], race: true)
        } catch {
            fatalError("the fixture race cannot be made: \(error)")  // a harness bug, not a finding
        }
    }()

    /// The identity whose replica the fixtures are: bob, a player of every game.
    public static var reader: SigningIdentity { players[1] }

    /// A replica, read by bob, holding the beginner game with a few moves
    /// by all three players, and the private game.
    public static let replica: Replica = {
        var r = Replica(circle: circle, reader: reader)
        r.insert(genesis)
        r.insert(privateGenesis)
        r.insert(raceGenesis)
        // The race: ann and bob each open a cell of their own board, then bob gives up.
        for (i, cell) in [40, 0].enumerated() {
            if let game = r.games[raceGenesis.gameID], let op = try? authors[i].reveal(cell, in: game, atMillis: 1_700_000_001_000) { r.insert(op) }
        }
        if let game = r.games[raceGenesis.gameID], let op = try? authors[1].resign(in: game, atMillis: 1_700_000_001_500) { r.insert(op) }
        var t: UInt64 = 1_700_000_001_000
        for (i, cell) in [0, 80, 8, 72, 40, 13].enumerated() {
            let author = authors[i % 3]
            guard let game = r.games[genesis.gameID] else { break }
            t += 1000
            if let op = try? author.reveal(cell, in: game, atMillis: t) { r.insert(op) }
            guard let again = r.games[genesis.gameID] else { break }
            if let op = try? author.cycleMark(cell + 1, in: again, atMillis: t + 1) { r.insert(op) }
        }
        return r
    }()

    /// Every op of the fixture game, genesis first.
    public static var ops: [Op] { (try? replica.games[genesis.gameID]?.allOps()) ?? [genesis] }

    /// Every op of the fixture race, genesis first.
    public static var raceOps: [Op] { (try? replica.games[raceGenesis.gameID]?.allOps()) ?? [raceGenesis] }
}

/// Seed inputs: when `SWEEPER_FUZZ_SEEDS` names a directory, a target's
/// `LLVMFuzzerInitialize` calls this with inputs made by the real encoders;
/// they are written there as `seed-NNN` and the process exits.
public func writeSeedsIfAsked(_ make: () -> [[UInt8]]) {
    guard let directory = ProcessInfo.processInfo.environment["SWEEPER_FUZZ_SEEDS"], !directory.isEmpty else { return }
    do {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (i, seed) in make().enumerated() {
            let name = String(format: "seed-%03d", i)
            try Data(seed).write(to: URL(fileURLWithPath: directory).appendingPathComponent(name))
        }
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("cannot write seeds to \(directory): \(error)\n".utf8))
        exit(1)
    }
}

/// Stops the run with a message when an invariant of the code under test
/// fails (libFuzzer saves the input as a crash).
public func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() {
        FileHandle.standardError.write(Data("invariant failed: \(message())\n".utf8))
        abort()
    }
}

/// The body of a fuzz target: one input, as libFuzzer passes it.
public typealias FuzzBody = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

/// Runs libFuzzer's driver on `body`; a target's `<Target>_main` (the entry
/// point SwiftPM gives an executable on Linux) calls this with its arguments.
public func runFuzzer(
    _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ body: FuzzBody
) -> CInt {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments, body)
}
