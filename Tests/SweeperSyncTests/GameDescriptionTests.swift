import SweeperConventions
import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// A device that takes only some games asks a peer what the others are,
/// to list them with their size, mines, creator and start.
@Suite struct GameDescriptionTests {
    /// Delivers between a holder (side 0, every game) and a device that
    /// takes only `taken` (side 1), until nothing is left to send.
    static func exchange(_ holder: inout Replica, _ other: inout Replica, _ sessions: inout [SyncSession], taken: GameInterest) throws {
        var inbox: [[SyncMessage]] = [[], []]
        inbox[0] += sessions[1].start(replica: other, interest: taken)
        inbox[1] += sessions[0].start(replica: holder)
        var rounds = 0
        while let i = (0..<2).first(where: { !inbox[$0].isEmpty }), rounds < 1_000 {
            rounds += 1
            let message = try SyncMessage(decoding: inbox[i].removeFirst().encoded)
            let step =
                i == 0
                ? sessions[0].receive(message, replica: &holder)
                : sessions[1].receive(message, replica: &other, taking: taken)
            inbox[1 - i] += step.replies
        }
    }

    @Test func aGameNotTakenIsDescribedAndAPrivateOneIsNot() throws {
        let circle = Fixtures.circle(1)
        let ann = OpAuthor(identity: Fixtures.identity(1), circle: circle)
        let bob = Fixtures.identity(2).peerID
        var holder = Replica(circle: circle)
        let open = try Fixtures.genesis(by: ann, width: 16, height: 12, mines: 30, seed: 3)
        let (parameters, layout) = try Fixtures.layout(width: 9, height: 9, mines: 10, seed: 4)
        let secret = try ann.privateGenesis(
            parameters: parameters, layout: layout, seed: 4, questionMarks: false, createdAtMillis: 77, players: [ann.identity.peerID, bob])
        holder.insert(open)
        holder.insert(secret)
        let game = try #require(holder.games[open.gameID])
        holder.insert(try #require(try ann.reveal(0, in: game, atMillis: 90)))

        var other = Replica(circle: circle)
        var sessions = [SyncSession(), SyncSession()]
        try Self.exchange(&holder, &other, &sessions, taken: .only([]))
        // Nothing of either game came: only what the open one is.
        #expect(other.games.isEmpty)
        #expect(Set(sessions[1].described.keys) == [open.gameID])
        let listing = try #require(sessions[1].described[open.gameID])
        #expect(listing.creator == ann.identity.peerID)
        #expect(listing.parameters.width == 16 && listing.parameters.height == 12 && listing.parameters.mines == 30)
        #expect(listing.status == .playing && listing.creatorProgress > 0 && listing.progress == listing.creatorProgress)
        #expect(listing.gameID == open.gameID && listing.authors == [ann.identity.peerID] && !listing.isPrivate)
        guard case .genesis(let g) = open.payload else { return }
        #expect(listing.startMillis == g.createdAtMillis)

        // A device that takes every game is sent them and asks nothing.
        var all = Replica(circle: circle)
        var allSessions = [SyncSession(), SyncSession()]
        try Self.exchange(&holder, &all, &allSessions, taken: .everything)
        #expect(all.games.count == 2 && allSessions[1].described.isEmpty)

        // A peer older than 11 is not asked.
        var old = Replica(circle: circle)
        var oldSessions = [SyncSession(), SyncSession()]
        oldSessions[1].peerDescribes = false
        try Self.exchange(&holder, &old, &oldSessions, taken: .only([]))
        #expect(oldSessions[1].described.isEmpty)
    }

    /// A description says what the id binds: one of another game, or of a
    /// game not asked about, is not taken; a made-up status is refused.
    @Test func descriptionsNotAskedForOrOfAnotherGameAreNotTaken() throws {
        let circle = Fixtures.circle(1)
        let ann = OpAuthor(identity: Fixtures.identity(1), circle: circle)
        var holder = Replica(circle: circle)
        let asked = try Fixtures.genesis(by: ann, seed: 5)
        holder.insert(asked)
        var session = SyncSession()
        var mine = Replica(circle: circle)
        let step = session.receive(.summary(holder.summary, wantsReply: false), replica: &mine, taking: .only([]))
        #expect(step.replies == [.describe([asked.gameID])])
        // Another game's genesis, named as if it were the one asked about.
        let other = try Fixtures.genesis(by: ann, seed: 6)
        guard case .genesis(let otherGenesis) = other.payload, case .genesis(let askedGenesis) = asked.payload else { return }
        _ = session.receive(
            .descriptions([GameDescription(creator: ann.identity.peerID, genesis: otherGenesis, status: .won, progressPermille: 1000)]),
            replica: &mine, taking: .only([]))
        #expect(session.described.isEmpty)
        // The game asked about, under another creator: another id, not taken.
        _ = session.receive(
            .descriptions([GameDescription(creator: Fixtures.identity(3).peerID, genesis: askedGenesis, status: .won, progressPermille: 1000)]),
            replica: &mine, taking: .only([]))
        #expect(session.described.isEmpty)
        _ = session.receive(
            .descriptions([GameDescription(creator: ann.identity.peerID, genesis: askedGenesis, status: .lost, progressPermille: 400)]),
            replica: &mine, taking: .only([]))
        #expect(session.described[asked.gameID]?.status == .lost)
        // Asked once per link: the next summary asks nothing again.
        #expect(session.receive(.summary(holder.summary, wantsReply: false), replica: &mine, taking: .only([])).replies.isEmpty)

        // A status byte past 2, or progress past 1000, does not decode.
        var bytes = SyncMessage.descriptions([GameDescription(creator: ann.identity.peerID, genesis: askedGenesis, status: .won, progressPermille: 1000)])
            .encoded
        bytes[bytes.count - 3] = 3
        #expect(throws: ByteDecodingError.self) { try SyncMessage(decoding: bytes) }
        #expect(throws: ByteDecodingError.self) { try SyncMessage(decoding: [1, 7, 1] + ann.identity.peerID.bytes + [0]) }
        // More than 256 games in one request is malformed.
        let many = (0...SyncMessage.describeLimit).map { i in GameID(unchecked: [UInt8](repeating: 0, count: 14) + [UInt8(i >> 8), UInt8(i & 255)]) }
        #expect(throws: ByteDecodingError.self) { try SyncMessage(decoding: SyncMessage.describe(many).encoded) }
        #expect(try SyncMessage(decoding: SyncMessage.describe(Array(many.prefix(256))).encoded) == .describe(Array(many.prefix(256))))
    }
}
