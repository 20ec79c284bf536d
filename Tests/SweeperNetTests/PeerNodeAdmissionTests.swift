import Logging
import NIOCore
import NIOPosix
import SweeperCrypto
import SweeperTestSupport
import Synchronization
import Testing

@testable import SweeperNet

/// A member's answer to a joining device is made off the node's loop: the
/// loop reads every link's messages, and admitting writes the circle's
/// records, which may wait for a writer under way.
@Suite struct PeerNodeAdmissionTests {
    /// Admits every device, once the test opens its gate.
    final class GatedAdmissions: PeerNodeDelegate {
        let keys: [CircleKey]
        private let asked = Mutex(0)
        private let gate: AsyncStream<Void>
        private let opener: AsyncStream<Void>.Continuation

        init(keys: [CircleKey]) {
            self.keys = keys
            (gate, opener) = AsyncStream<Void>.makeStream()
        }

        var askedCount: Int { asked.withLock { $0 } }
        func open() { opener.yield() }

        func linkEstablished(_ link: PeerLinkHandle) -> LinkReceiver { { _ in } }
        func linkClosed(_ link: PeerLinkHandle) {}
        func admissionRequested(_ request: AdmissionRequest, from peer: PeerID) async -> AdmissionReply {
            asked.withLock { $0 += 1 }
            for await _ in gate { break }
            return .admitted(messages: [], keys: keys)
        }
    }

    /// A member of `circle` that takes the invitation `invitation`, answered by `delegate`.
    static func member(of circle: CircleKey, inviting invitation: PeerID, delegate: any PeerNodeDelegate, on loop: any EventLoop) -> PeerNode {
        var logger = Logger(label: "test.member")
        logger.logLevel = .critical
        return PeerNode(
            credentials: NodeCredentials(
                circle: circle, identity: SigningIdentity(), name: "member",
                invitations: [invitation: InvitationSecret.handshakeKey(for: invitation)]),
            delegate: delegate, eventLoop: loop, logger: logger)
    }

    @Test func theLoopGoesOnWhileAnAdmissionIsMade() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let circle = CircleKey()
        let secret = InvitationSecret()
        let invitation = secret.identity.peerID
        let delegate = GatedAdmissions(keys: [circle])
        let member = Self.member(of: circle, inviting: invitation, delegate: delegate, on: loop)
        let port = try #require(try await member.listen(on: [("127.0.0.1", 0)]).first?.port)
        let running = Task { try await member.run() }
        let joiner = try await TestNode(circle: CircleKey(), name: "joiner")

        let answer = Task { await joiner.node.redeem(secret, address: ("127.0.0.1", port)) }
        #expect(await eventuallyAsync { delegate.askedCount == 1 }, "the member was never asked")
        // Asked, not yet answered: the member's loop takes other work meanwhile.
        let loopAnswered = try await loop.submit { true }.get()
        #expect(loopAnswered)
        delegate.open()
        #expect(await answer.value == .admitted(member: member.peerID, messages: [], keys: [circle]))
        #expect(delegate.askedCount == 1)

        await joiner.stop()
        await member.shutdown()
        _ = await running.result
        try await group.shutdownGracefully()
    }

    /// Admits every device with `messages` sent before the answer.
    final class Talkative: PeerNodeDelegate {
        let keys: [CircleKey]
        let messages: [ApplicationMessage]
        init(keys: [CircleKey], messages: [ApplicationMessage]) {
            self.keys = keys
            self.messages = messages
        }
        func linkEstablished(_ link: PeerLinkHandle) -> LinkReceiver { { _ in } }
        func linkClosed(_ link: PeerLinkHandle) {}
        func admissionRequested(_ request: AdmissionRequest, from peer: PeerID) async -> AdmissionReply {
            .admitted(messages: messages, keys: keys)
        }
    }

    /// What a member sends before its answer is kept up to 32 MiB: three
    /// messages of a megabyte come with the admission, three of 12 MiB end
    /// the try, as a message the device cannot read does.
    @Test func aMemberSendingTooMuchBeforeItsAnswerIsLeft() async throws {
        for (size, kept) in [(1 << 20, true), (12 << 20, false)] {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let circle = CircleKey()
            let secret = InvitationSecret()
            let invitation = secret.identity.peerID
            let messages = (0..<3).map { _ in ApplicationMessage(type: 1, body: [UInt8](repeating: 7, count: size)) }
            let member = Self.member(of: circle, inviting: invitation, delegate: Talkative(keys: [circle], messages: messages), on: group.next())
            let port = try #require(try await member.listen(on: [("127.0.0.1", 0)]).first?.port)
            let running = Task { try await member.run() }
            let joiner = try await TestNode(circle: CircleKey(), name: "joiner")
            let answer = await joiner.node.redeem(secret, address: ("127.0.0.1", port))
            var taken: [ApplicationMessage]?
            if case .admitted(_, let got, _) = answer { taken = got }
            // Compared to a verdict: a failure prints no megabytes.
            let takenWhole = taken.map { $0 == messages } ?? false
            let takenAny = taken != nil
            if kept {
                #expect(takenWhole, "three messages of a megabyte were not taken with the admission")
            } else {
                #expect(!takenAny, "36 MiB before the answer were taken")
            }
            await joiner.stop()
            await member.shutdown()
            _ = await running.result
            try await group.shutdownGracefully()
        }
    }
}
