import Foundation
import Logging
import SweeperCrypto
import SweeperMessages
import SweeperStore
import Testing
@testable import SweeperDaemon

/// Names are people: two members that chose one name while apart are told
/// apart wherever a name is shown.
@Suite struct PeerBookTests {
    @Test func twoMembersOfOneNameAreToldApartByTheirIDs() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("peerbook-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        defer { store.close() }
        let book = PeerBook(store: store, logger: Logger(label: "test"))
        let mum = SigningIdentity(), laptop = SigningIdentity(), max = SigningIdentity()
        book.take(ProfileNote(signing: mum, serial: 1, name: "Mum", colour: 0))
        book.take(ProfileNote(signing: laptop, serial: 1, name: "mum", colour: 0))
        book.take(ProfileNote(signing: max, serial: 1, name: "Max", colour: 0))
        let members = [mum.peerID, laptop.peerID, max.peerID]
        #expect(book.distinctName(of: mum.peerID, among: members) == "Mum (\(mum.peerID.shortDescription))")
        #expect(book.distinctName(of: laptop.peerID, among: members) == "mum (\(laptop.peerID.shortDescription))")
        #expect(book.distinctName(of: max.peerID, among: members) == "Max")
        #expect(book.others(named: "MUM", than: max.peerID, among: members).count == 2)
        // Once one is no longer a member (or changes its name), the other is just its name.
        #expect(book.distinctName(of: mum.peerID, among: [mum.peerID, max.peerID]) == "Mum")
        book.take(ProfileNote(signing: laptop, serial: 2, name: "Dad", colour: 0))
        #expect(book.distinctName(of: mum.peerID, among: members) == "Mum")
    }
}
