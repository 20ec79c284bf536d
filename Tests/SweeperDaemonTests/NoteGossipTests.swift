import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import SweeperCrypto
import SweeperMessages
import SweeperSync
import Testing

@testable import SweeperDaemon
@testable import SweeperNet

/// How notes and membership records spread over the links, and what the
/// registry lets go where: tested against in-process links, each an
/// `EmbeddedChannel` that keeps what is written to it, as swift-nio tests
/// its handlers.
@Suite struct NoteGossipTests {
    /// A link to `peer` whose writes stay in its channel.
    struct TestLink {
        let link: PeerLink
        let channel: EmbeddedChannel

        init(_ id: UInt64, to peer: PeerID, version: UInt8 = PeerCapabilities.currentVersion) {
            channel = EmbeddedChannel()
            let handle = PeerLinkHandle(
                id: id, peer: peer, channel: channel, reported: NIOLockedValueBox([]), version: NIOLockedValueBox(version), heard: NIOLockedValueBox(.now()))
            link = PeerLink(handle: handle)
        }

        /// The application messages written to the link since the last call, decoded.
        func sent() throws -> [PeerMessage] {
            var out: [PeerMessage] = []
            while let message = try channel.readOutbound(as: LinkMessage.self) {
                if case .application(let application) = message {
                    out.append(try PeerMessage(type: application.type, body: application.body))
                }
            }
            return out
        }
    }

    /// Three links (to ann, bob and cat) in one registry, and gossip over them.
    struct Circle {
        let ann = SigningIdentity()
        let bob = SigningIdentity()
        let cat = SigningIdentity()
        let links = LinkRegistry()
        let gossip: NoteGossip
        let toAnn: TestLink, toBob: TestLink, toCat: TestLink

        init(catVersion: UInt8 = PeerCapabilities.currentVersion) {
            gossip = NoteGossip(links: links, logger: Logger(label: "test"))
            toAnn = TestLink(1, to: ann.peerID)
            toBob = TestLink(2, to: bob.peerID)
            toCat = TestLink(3, to: cat.peerID, version: catVersion)
            for link in [toAnn, toBob, toCat] { links.add(link.link) }
        }
    }

    @Test func aNewNoteGoesOnToEveryOtherLinkButItsAuthors() throws {
        let c = Circle()
        // Cat's profile, relayed to us by bob: it goes to ann only (not back
        // to bob, where it came from; not to cat, who wrote it).
        let note = ProfileNote(signing: c.cat, serial: 1, name: "Cat", colour: 2)
        var taken: [ProfileNote] = []
        let isNew = c.gossip.spread(note, as: .profile(note), from: c.toBob.link) {
            taken.append($0); return true
        }
        #expect(isNew && taken == [note])
        #expect(try c.toAnn.sent() == [.profile(note)])
        #expect(try c.toBob.sent().isEmpty)
        #expect(try c.toCat.sent().isEmpty)
        // The same note again is not new to its keeper: it stops here.
        #expect(!c.gossip.spread(note, as: .profile(note), from: c.toAnn.link) { _ in false })
        #expect(try [c.toAnn, c.toBob, c.toCat].allSatisfy { try $0.sent().isEmpty })
    }

    @Test func aScopeKeepsANoteFromTheLinksItDoesNotAdmit() throws {
        let c = Circle()
        let note = ProfileNote(signing: c.cat, serial: 1, name: "Cat", colour: 2)
        // Relayed by cat itself: ann and bob would get it, but the scope admits bob alone.
        c.gossip.spread(note, as: .profile(note), from: c.toCat.link, take: { _ in true }, where: { $0.peer == c.bob.peerID })
        #expect(try c.toAnn.sent().isEmpty)
        #expect(try c.toBob.sent() == [.profile(note)])
        #expect(try c.toCat.sent().isEmpty)
    }

    @Test func aForgedNoteIsNeitherTakenNorSentOn() throws {
        let c = Circle()
        let genuine = ProfileNote(signing: c.cat, serial: 1, name: "Cat", colour: 2)
        // Bob's signature under cat's name: the note says cat wrote it.
        let forged = ProfileNote(signing: c.bob, serial: 1, name: "Cat", colour: 2)
        let claimed = try ProfileNote(
            decoding: Array(genuine.encoded.prefix(genuine.encoded.count - 64)) + forged.signature.bytes)
        #expect(!claimed.isAuthentic)
        var taken = 0
        #expect(
            !c.gossip.spread(claimed, as: .profile(claimed), from: c.toBob.link) { _ in
                taken += 1; return true
            })
        #expect(taken == 0)
        #expect(try [c.toAnn, c.toBob, c.toCat].allSatisfy { try $0.sent().isEmpty })
    }

    @Test func membershipRecordsGoToEveryLinkButTheOneTheyCameOn() throws {
        let c = Circle()
        let records: [[UInt8]] = [Array(repeating: 7, count: 40), Array(repeating: 9, count: 40)]
        c.gossip.spread(membership: records, from: c.toAnn.link)
        #expect(try c.toAnn.sent().isEmpty)
        #expect(try c.toBob.sent() == [.membership(records)])
        #expect(try c.toCat.sent() == [.membership(records)])
        // Records made here go to every link.
        c.gossip.spread(membership: records)
        #expect(try [c.toAnn, c.toBob, c.toCat].allSatisfy { try $0.sent() == [.membership(records)] })
    }

    @Test func aPeerIsNeverSentAKindItCannotRead() throws {
        // Cat speaks protocol 2: it reads sync messages only, not profiles or membership records.
        let c = Circle(catVersion: PeerHello.linksVersion)
        let note = ProfileNote(signing: c.ann, serial: 1, name: "Ann", colour: 1)
        c.gossip.spread(note, as: .profile(note), from: c.toAnn.link) { _ in true }
        c.gossip.spread(membership: [Array(repeating: 7, count: 40)])
        #expect(try c.toBob.sent().count == 2)
        #expect(try c.toCat.sent().isEmpty)
    }

    @Test func theRegistryWithholdsGamesOfCirclesLeftAndPrivateGamesFromOthers() throws {
        let c = Circle()
        let (left, secret, open) = (
            GameID(bytes: Array(repeating: 1, count: 16)), GameID(bytes: Array(repeating: 2, count: 16)),
            GameID(bytes: Array(repeating: 3, count: 16))
        )
        let (l, s, o) = (try #require(left), try #require(secret), try #require(open))
        c.links.withhold([l])
        c.links.setPrivatePlayers([s: [c.ann.peerID, c.bob.peerID]])
        for link in [c.toAnn, c.toBob, c.toCat].map(\.link) {
            #expect(!c.links.sends(game: l.bytes, on: link))
        }
        #expect(c.links.sends(game: s.bytes, on: c.toAnn.link) && c.links.sends(game: s.bytes, on: c.toBob.link))
        #expect(!c.links.sends(game: s.bytes, on: c.toCat.link))
        // An open game goes to whoever takes it (every game, until a peer says its interest).
        #expect([c.toAnn, c.toBob, c.toCat].allSatisfy { c.links.sends(game: o.bytes, on: $0.link) })
        // A link gone is no longer sent to.
        c.links.remove(id: c.toCat.link.id)
        c.gossip.spread(membership: [Array(repeating: 7, count: 40)])
        #expect(try c.toCat.sent().isEmpty)
        #expect(try c.toBob.sent().count == 1)
    }
}
