import FoundationEssentials
import SweeperCrypto
import SweeperDaemon
import SweeperGame
import SweeperStore
import SweeperSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--write-store DIR GAMES OPS`: a daemon's state directory holding
/// `GAMES` games on 500×500 boards (50,000 mines), each played by three
/// players to `OPS` ops (or to its end, when shorter), written as the
/// daemon writes them; its identity is the first player's and its circle
/// the players' own. For timing a daemon's start over many long games
/// (Scripts/bench.py's start-up figures).
@MainActor func writeStore(directory: String, games: Int, ops: Int) {
    guard let store = try? Store(directory: directory) else { fail("cannot open a store in \(directory)") }
    defer { store.close() }
    let me = players[0].identity
    guard (try? store.saveIdentity(StoredIdentity(secretKey: Data(me.secretKeyBytes), publicKey: Data(me.peerID.bytes)))) != nil,
        (try? store.setCircleKey(Data(circle.bytes))) != nil
    else { fail("cannot write the identity and circle") }
    guard let parameters = try? GameParameters(width: 500, height: 500, mines: 50_000) else { fail("500×500") }
    var written = 0
    let t0 = wallSeconds()
    for g in 0..<games {
        let recorder = Recorder(parameters, seed: UInt64(9_000 + g), authors: Array(players[0..<3]), recordTrace: false)
        recorder.play(upTo: ops)
        guard let state = recorder.replica.state(of: recorder.gameID), let params = try? JSONEncoder().encode(state.genesis.parameters) else {
            fail("game \(g) has no state")
        }
        let created = Date(timeIntervalSince1970: Double(state.startMillis) / 1000)
        let record = StoredGame(id: recorder.gameID.description, params: params, created: created, lastActivity: created, status: state.status.rawValue)
        guard (try? store.createGame(record, ops: recorder.ops.map { StoredOps.row($0) }, durability: .deferred)) == true else {
            fail("cannot write game \(g)")
        }
        written += recorder.ops.count
    }
    print("wrote \(games) games of 500×500, \(written) ops in all, in \(format(wallSeconds() - t0, 1)) s")
}
