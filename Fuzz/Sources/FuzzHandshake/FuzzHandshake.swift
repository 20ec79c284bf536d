// The secret handshake, both sides: an honest peer of the same circle talks
// to the side under test, and the input decides which of the messages the
// side under test receives are delivered as sent, replaced, altered, cut,
// lengthened or followed by one more.
import FuzzSupport
import SweeperCrypto

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHandshake(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = input.byte()
    let testedRole: SecretHandshake.Role = mode & 1 == 0 ? .server : .client
    let honestRole: SecretHandshake.Role = testedRole == .server ? .client : .server
    let expected: PeerID? =
        switch (mode >> 1) & 3 {
        case 1: Fixtures.players[1].peerID
        case 2: Fixtures.players[2].peerID
        case 3: Fixtures.players[0].peerID
        default: nil
        }
    var tested = SecretHandshake(
        role: testedRole, circle: Fixtures.circle, identity: Fixtures.players[0],
        expectedPeer: testedRole == .client ? expected : nil)
    // The honest side is usually a member; (mode >> 3) & 1 makes it this very daemon.
    let honestIdentity = mode & 8 == 0 ? Fixtures.players[1] : Fixtures.players[0]
    var honest = SecretHandshake(role: honestRole, circle: Fixtures.circle, identity: honestIdentity)

    // Messages in flight to the tested side and to the honest side.
    var toTested: [UInt8]? = honest.start()
    var toHonest: [UInt8]? = tested.start()
    var testedDone = false
    for _ in 0..<4 {
        if let m = toHonest {
            toHonest = nil
            switch try? honest.receive(m) {
            case .send(let reply)?: toTested = reply
            case .finish(let reply, _)?: toTested = reply
            case nil: break
            }
        }
        guard let real = toTested ?? (testedDone ? [] : nil) else { break }
        toTested = nil
        let message = tamper(real, &input)
        do {
            switch try tested.receive(message) {
            case .send(let reply): toHonest = reply
            case .finish(let reply, let result):
                toHonest = reply
                check(result.peer == honestIdentity.peerID, "the handshake finished with the wrong peer")
                check(result.peer != Fixtures.players[0].peerID, "the handshake finished with this daemon itself")
                testedDone = true
            }
        } catch {
            break
        }
    }
    return 0
}

/// The message as the tested side gets it.
func tamper(_ real: [UInt8], _ input: inout FuzzInput) -> [UInt8] {
    switch input.byte() % 8 {
    case 1: return input.chunk()
    case 2:
        var m = real
        for (i, b) in input.chunk().enumerated() where !m.isEmpty { m[i % m.count] ^= b }
        return m
    case 3: return Array(real.prefix(Int(input.byte())))
    case 4: return real + input.chunk()
    default: return real
    }
}

@_cdecl("FuzzHandshake_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    writeSeedsIfAsked {
        [
            [0, 0, 0, 0, 0],  // server, all delivered
            [1, 0, 0, 0, 0],  // client
            [3, 0, 0, 0, 0],  // client expecting the peer it gets
            [5, 0, 0, 0, 0],  // client expecting another peer
            [8, 0, 0, 0, 0],  // a server talking to itself
            [0, 0, 2] + chunk([0, 0, 0, 1]),
            [1, 3, 40],
            [0, 1] + chunk([UInt8](repeating: 7, count: 64)),
        ]
    }
    return runFuzzer(argc, argv, fuzzHandshake)
}
