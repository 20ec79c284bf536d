import Foundation
import Logging
import SweeperControl
import SweeperCrypto
import SweeperStore
import Testing

@testable import SweeperDaemon
@testable import SweeperMessages

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

    /// A peer's name kept by an earlier release, which let escapes and
    /// invisible characters through, is cleaned when it is read back.
    @Test func aNameKeptByAnEarlierReleaseIsCleanedWhenReadBack() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("peerbook-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        defer { store.close() }
        let (gran, ghost) = (SigningIdentity().peerID, SigningIdentity().peerID)
        try store.savePeer(StoredPeer(peerID: gran.description, name: "Gran\u{1B}[2J\u{202E}", address: nil, lastSeen: Date()))
        try store.savePeer(StoredPeer(peerID: ghost.description, name: "\u{200B}\u{07}", address: nil, lastSeen: Date()))
        let book = PeerBook(store: store, logger: Logger(label: "test"))
        #expect(book.name(of: gran) == "Gran[2J")
        #expect(book.name(of: ghost) == ghost.shortDescription)
        // And when the peer comes again without a name that cleans to something.
        book.remember(gran, name: "\u{200B}", address: nil)
        #expect(book.name(of: gran) == "Gran[2J")
    }

    @Test func aLookAlikeNameIsShownWithItsIDAndInvisibleCharactersNotAtAll() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("peerbook-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        defer { store.close() }
        let book = PeerBook(store: store, logger: Logger(label: "test"))
        let max = SigningIdentity(), mimic = SigningIdentity(), sam = SigningIdentity()
        book.take(ProfileNote(signing: max, serial: 1, name: "Max", colour: 0))
        // Cyrillic "Мах" comes in a peer's profile: kept, and shown with its id, as Max is.
        book.take(ProfileNote(signing: mimic, serial: 1, name: "\u{41C}\u{430}\u{445}", colour: 0))
        let members = [max.peerID, mimic.peerID, sam.peerID]
        #expect(book.distinctName(of: mimic.peerID, among: members) == "\u{41C}\u{430}\u{445} (\(mimic.peerID.shortDescription))")
        #expect(book.distinctName(of: max.peerID, among: members) == "Max (\(max.peerID.shortDescription))")
        #expect(book.others(named: "Max", than: sam.peerID, among: members) == [max.peerID, mimic.peerID])
        // A profile a release before signed with a right-to-left override still reads, shown without it.
        let old = ProfileNote(signing: sam, serial: 1, name: "Sam", colour: 0)
        let raw = ProfileNote.signedBytes(author: sam.peerID, serial: 2, name: "\u{202E}maS", colour: 0)
        let note = try ProfileNote(decoding: raw + sam.sign(ProfileNote.signatureDomain + raw).bytes)
        #expect(note.isAuthentic)
        book.take(old)
        book.take(note)
        #expect(book.name(of: sam.peerID) == "maS")
    }

    @Test func aNameThatLooksLikeAnotherMembersIsRefusedAtProfile() async throws {
        let f = try await DaemonFixture()
        let max = SigningIdentity()
        try await f.admit(max.peerID)
        f.router.book.take(ProfileNote(signing: max, serial: 1, name: "Max", colour: 0))
        for wanted in ["\u{41C}\u{430}\u{445}", "MAX", "\u{39C}\u{3B1}\u{3C7}"] {
            do {
                let _: Commands.Profile.Result = try await result(f.router, #"{"id":1,"command":"profile","name":"\#(wanted)"}"#)
                Issue.record("\(wanted) was taken beside Max")
            } catch let error as ControlError {
                #expect(error.code == "name-taken" && error.message.contains(max.peerID.shortDescription), "\(error)")
            }
        }
        // A bidi override or a zero-width character is refused, not silently kept.
        for wanted in ["\u{202E}xaM", "Ma\u{200B}x", "Sam\u{2066}"] {
            await #expect(throws: ControlError.self) {
                let _: Commands.Profile.Result = try await result(f.router, #"{"id":2,"command":"profile","name":"\#(wanted)"}"#)
            }
        }
        let taken: Commands.Profile.Result = try await result(f.router, #"{"id":3,"command":"profile","name":"Mia"}"#)
        #expect(taken.name == "Mia")
        await f.cleanup()
    }
}

/// This device's own player is told apart too: a member who took its name
/// while apart shows with its short id, and so does this device's player,
/// in the players of a game and in who looks where.
@Suite struct OwnNameClashTests {
    @Test func aMemberOfThisDevicesNameIsToldApartEverywhere() async throws {
        let f = try await DaemonFixture()
        let twin = SigningIdentity()
        try await f.admit(twin.peerID)
        let own = f.core.router.signer.peerID
        f.core.router.book.take(ProfileNote(signing: twin, serial: 1, name: "Ada", colour: 0))
        #expect(f.core.router.views.name(of: twin.peerID) == "Ada (\(twin.peerID.shortDescription))")
        #expect(f.core.router.views.name(of: own) == "ada (\(own.shortDescription))")
        // A game's players and who looks where say the same.
        let game: GameView = try await result(f.router, #"{"id":1,"command":"new","preset":"beginner"}"#)
        #expect(game.players.first?.name == "ada (\(own.shortDescription))", "\(game.players)")
        let looking = f.core.router.views.presence(twin.peerID, nil, own: false)
        #expect(looking.name == "Ada (\(twin.peerID.shortDescription))")
        #expect(f.core.router.views.presence(own, nil, own: true).name == "ada (\(own.shortDescription))")
        // Once the twin is named otherwise, both are just their names.
        f.core.router.book.take(ProfileNote(signing: twin, serial: 2, name: "Bea", colour: 0))
        #expect(f.core.router.views.name(of: own) == "ada" && f.core.router.views.name(of: twin.peerID) == "Bea")
        await f.cleanup()
    }
}
