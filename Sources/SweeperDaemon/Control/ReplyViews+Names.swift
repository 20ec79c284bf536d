import SweeperControl
import SweeperCrypto

/// How every view names a player and marks them beside a cell.
extension ReplyViews {
    /// A player's name: this daemon's, a peer's as last heard, else the
    /// short form of its id; with the short id beside it when another
    /// member has the same name (`Mum (AB12C)`).
    /// Worked out once per state of the members and the names heard (``PlayerNames``).
    func name(of author: PeerID) -> String {
        names.name(of: author, at: namesKey) {
            peers.distinctName(of: author, among: members.view.members.keys, own: (ownID, ownName)) ?? author.shortDescription
        }
    }

    /// What the names and letters shown now are worked out from.
    private var namesKey: PlayerNames.Key {
        PlayerNames.Key(members: members.generation, book: peers.generation, own: ownID, ownName: ownName)
    }

    /// Every member's letter beside a cell (``PlayerLetters``), handed out
    /// over the whole circle by the names its members go by (profile, else
    /// as admitted): the same on every device that knows the same members.
    func letters() -> [PeerID: Character] {
        names.letters(at: namesKey) { workLetters() }
    }

    private func workLetters() -> [PeerID: Character] {
        let view = members.view
        var goneBy: [String: String] = [:]
        var ids: [String: PeerID] = [:]
        for m in view.members.keys {
            goneBy[m.description] = peers.name(of: m) ?? view.members[m]?.name ?? m.shortDescription
            ids[m.description] = m
        }
        if goneBy[ownID.description] == nil {
            goneBy[ownID.description] = peers.name(of: ownID) ?? ownName
            ids[ownID.description] = ownID
        }
        var out: [PeerID: Character] = [:]
        for (key, letter) in PlayerLetters.assign(goneBy) { if let id = ids[key] { out[id] = letter } }
        return out
    }
}
