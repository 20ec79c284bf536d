import Foundation
import NIOCore
import NIOEmbedded
import SweeperControl
import SweeperCrypto
import SweeperMessages
import Testing

@testable import SweeperDaemon

/// The events a subscription holds, delivered to a channel made, attached
/// and read on one thread (an embedded channel is used from the thread
/// that made it, and an async test may move between threads).
private func drained(_ subscription: EventConnection) throws -> [[String: Any]] {
    let channel = EmbeddedChannel()
    subscription.attach(channel)
    defer { subscription.end() }
    return try lines(channel)
}

/// A rename reaches every open viewer at once: a `profile-changed` event
/// names the player as every view does.
@Suite struct RenameEventTests {
    @Test func aRenameHereIsAnEventForEveryViewer() async throws {
        let f = try await DaemonFixture()
        let subscription = f.events.subscribe(game: nil)
        let _: Commands.Profile.Result = try await result(f.router, #"{"id":1,"command":"profile","name":"Grandma"}"#)
        let renamed = try drained(subscription).filter { $0["event"] as? String == "profile-changed" }
        let presence = renamed.first?["presence"] as? [String: Any]
        #expect(
            renamed.count == 1 && presence?["name"] as? String == "Grandma"
                && presence?["peer"] as? String == f.core.router.signer.peerID.description, "\(renamed)")
        #expect(presence?["game"] == nil)
        await f.cleanup()
    }

    @Test func aMembersNewerProfileIsAnEventNamingThem() async throws {
        let f = try await DaemonFixture()
        let sam = SigningIdentity()
        try await f.admit(sam.peerID)
        let subscription = f.events.subscribe(game: nil)
        // As the inbox takes a newer profile: kept, then every viewer told.
        let sink = PeerEvents(events: f.events, views: f.core.router.views)
        #expect(f.core.router.book.take(ProfileNote(signing: sam, serial: 1, name: "Sam", colour: 2)))
        sink.profileChanged(of: sam.peerID)
        let presence = try drained(subscription).first { $0["event"] as? String == "profile-changed" }?["presence"] as? [String: Any]
        #expect(presence?["name"] as? String == "Sam" && presence?["colour"] as? Int == 2)
        await f.cleanup()
    }
}

/// Each player's letter is handed out over the whole circle, so it is the
/// same whoever looks: Mum is U beside Max and beside nobody.
@Suite struct PlayerLetterTests {
    @Test func lettersComeFromTheWholeCircleNotFromWhoIsLooking() async throws {
        let f = try await DaemonFixture()
        let mum = SigningIdentity(), max = SigningIdentity()
        for p in [mum, max] { try await f.admit(p.peerID) }
        f.core.router.book.take(ProfileNote(signing: mum, serial: 1, name: "Mum", colour: 0))
        f.core.router.book.take(ProfileNote(signing: max, serial: 1, name: "Max", colour: 0))
        let views = f.core.router.views
        // ada, Max, Mum by name: A, M, then U for Mum (M is Max's).
        #expect(views.presence(mum.peerID, nil, own: false).letter == "U" && views.presence(max.peerID, nil, own: false).letter == "M")
        #expect(views.presence(f.core.router.signer.peerID, nil, own: true).letter == "A")
        // A game's players carry the same letters.
        let game: GameView = try await result(f.router, #"{"id":1,"command":"new","preset":"beginner"}"#)
        #expect(game.players.first?.letter == "A")
        await f.cleanup()
    }

    /// Names and letters are worked out once per state of the circle and
    /// of the names heard, and again after each change: a rename, a
    /// member of the same name admitted.
    @Test func namesAndLettersFollowEveryChange() async throws {
        let f = try await DaemonFixture()
        let mum = SigningIdentity(), other = SigningIdentity()
        try await f.admit(mum.peerID)
        let views = f.core.router.views
        f.core.router.book.take(ProfileNote(signing: mum, serial: 1, name: "Mum", colour: 0))
        #expect(views.name(of: mum.peerID) == "Mum" && views.letters()[mum.peerID] == "M")
        // Renamed: the next event says so.
        f.core.router.book.take(ProfileNote(signing: mum, serial: 2, name: "Bea", colour: 0))
        #expect(views.name(of: mum.peerID) == "Bea" && views.letters()[mum.peerID] == "B")
        // A second Bea joins: the first is told apart, and has a letter of her own.
        f.core.router.book.take(ProfileNote(signing: other, serial: 1, name: "Bea", colour: 0))
        #expect(views.name(of: mum.peerID) == "Bea", "not a member yet: nobody to tell her from")
        try await f.admit(other.peerID)
        #expect(views.name(of: mum.peerID) == "Bea (\(mum.peerID.shortDescription))")
        let letters = views.letters()
        #expect(letters[mum.peerID] != nil && letters[other.peerID] != nil && letters[mum.peerID] != letters[other.peerID])
        await f.cleanup()
    }

    @Test func aNameIsWorkedOutOncePerKey() {
        let names = PlayerNames()
        let peer = SigningIdentity().peerID
        var worked = 0
        let key = PlayerNames.Key(members: 1, book: 1, own: peer, ownName: "ada")
        for _ in 0..<3 {
            #expect(
                names.name(of: peer, at: key) {
                    worked += 1; return "Mum"
                } == "Mum")
        }
        #expect(worked == 1)
        var changed = key
        changed.book = 2
        #expect(
            names.name(of: peer, at: changed) {
                worked += 1; return "Bea"
            } == "Bea")
        #expect(worked == 2)
        var letters = 0
        for _ in 0..<2 {
            _ = names.letters(at: changed) {
                letters += 1; return [peer: "B"]
            }
        }
        #expect(letters == 1 && names.name(of: peer, at: changed) { "never" } == "Bea", "the letters kept the names")
    }
}
