// Text that names keys and games: invite codes (`sweeper join`), peer ids,
// Crockford base32, game ids in hex. What decodes must print back to text
// that decodes to the same thing.
import FuzzSupport
import SweeperCrypto
import SweeperSync

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzInviteCode(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: FuzzInput(data, size).bytes, as: UTF8.self)
    if let key = try? InviteCode.decode(text) {
        check((try? InviteCode.decode(InviteCode.encode(key))) == key, "an invite code does not survive re-encoding")
    }
    switch try? InviteCode.read(text) {
    case .invitation(let secret):
        check((try? InviteCode.read(InviteCode.encode(secret))) == .invitation(secret), "an invitation code does not survive re-encoding")
    case .pinned(let secret, let root):
        check(
            (try? InviteCode.read(InviteCode.encode(secret, root: root))) == .pinned(secret, root: root),
            "a code naming its circle's root does not survive re-encoding")
    case .circleKey(let key):
        check((try? InviteCode.decode(text)) == key, "the two readers disagree on an earlier release's code")
    case nil:
        break
    }
    if let peer = try? PeerID(parsing: text) {
        check((try? PeerID(parsing: peer.description)) == peer, "a peer id does not survive printing")
        _ = peer.shortDescription
    }
    if let bytes = try? CrockfordBase32.decode(text) {
        check((try? CrockfordBase32.decode(CrockfordBase32.encode(bytes))) == bytes, "base32 does not survive re-encoding")
    }
    if let id = GameID(hex: text) {
        check(GameID(hex: id.description) == id, "a game id does not survive printing")
    }
    return 0
}

@_cdecl("FuzzInviteCode_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    writeSeedsIfAsked {
        let code = InviteCode.encode(Fixtures.circle)
        let invitation = InvitationSecret(bytes: Array(0..<16)).map { InviteCode.encode($0) } ?? ""
        let pinned = InvitationSecret(bytes: Array(0..<16)).map { InviteCode.encode($0, root: Array(100..<132)) } ?? ""
        return [
            code,
            invitation,
            pinned,
            invitation.lowercased(),
            "  " + code.lowercased().replacingOccurrences(of: "-", with: " ") + "\n",
            Fixtures.players[0].peerID.description,
            Fixtures.players[1].peerID.description.lowercased(),
            CrockfordBase32.encode(Array("sweeper".utf8)),
            Fixtures.genesis.gameID.description,
        ].map { Array($0.utf8) }
    }
    return runFuzzer(argc, argv, fuzzInviteCode)
}
