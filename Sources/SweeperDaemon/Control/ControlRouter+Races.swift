import SweeperCrypto

/// Who races when nobody is named.
extension ControlRouter {
    /// The members here: the devices linked now and this one, and the
    /// players each of them hosts (a plain `--race` enrols them; an
    /// unused tablet away is not made to race).
    func membersHere() -> Set<PeerID> {
        let devices = Set(views.links.all.map(\.peer)).union([signer.peerID])
        return Set(members.view.members.values.filter { devices.contains($0.peer) || $0.hostedBy.map(devices.contains) == true }.map(\.peer))
    }
}
