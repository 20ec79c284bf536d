import FoundationEssentials
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ServiceLifecycle
import SweeperCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Invitation links: a member answers a joining device's admission request,
/// and a joining device redeems an invitation with a member.
extension PeerNode {
    /// Handles a message on an invitation link (a handshake that proved an
    /// invitation's key): an admission request gets the delegate's answer,
    /// then the link closes; anything else closes it at once.
    ///
    /// The answer is made off the loop (``PeerNodeDelegate/admissionRequested(_:from:)``),
    /// and written when it is ready; a link asks once (`asked`): a second
    /// request while the first is answered closes it.
    func admit(
        _ message: LinkMessage, from peer: PeerID, invitation: PeerID, channel: any Channel, remote: String, asked: NIOLockedValueBox<Bool>
    ) {
        switch message {
        case .ping, .pong:
            return
        case .admission(let request) where request.invitation == invitation && request.isValid(joining: peer, member: peerID):
            let first = asked.withLockedValue { asked in
                defer { asked = true }
                return !asked
            }
            guard first else {
                logFailure("\(peer) invitation", "dropped an invitation link that asked twice", remote: remote)
                channel.close(promise: nil)
                return
            }
            let (delegate, logger) = (delegate, logger)
            Task {
                let reply = await delegate.admissionRequested(request, from: peer)
                var messages: [LinkMessage] = []
                switch reply {
                case .admitted(let preamble, let keys):
                    messages = preamble.map(LinkMessage.application)
                    messages.append(.admitted(keys))
                    logger.notice("admitted a device with an invitation", metadata: ["peer": "\(peer.shortDescription)", "remote": "\(remote)"])
                case .refused(let why):
                    messages.append(.refused(why))
                    logger.notice(
                        "refused a device's invitation", metadata: ["peer": "\(peer.shortDescription)", "remote": "\(remote)", "why": "\(why)"])
                }
                for m in messages.dropLast() { channel.write(m, promise: nil) }
                if let last = messages.last {
                    channel.writeAndFlush(last).whenComplete { _ in channel.close(promise: nil) }
                }
            }
        default:
            logFailure("\(peer) invitation", "dropped an invitation link that sent something else than a request", remote: remote)
            channel.close(promise: nil)
        }
    }

    /// Asks to be admitted with an invitation: dials `address` when given,
    /// else every daemon mDNS has seen (of any circle) and the static
    /// peers, one after another, and returns the first answer a member
    /// gives (a handshake that does not prove the invitation's key fails at
    /// once with a daemon of another circle) but "elsewhere": only the
    /// member that made the invitation admits with it. An application message that
    /// comes before the answer and that `accepting` refuses (one the
    /// application cannot read) ends that member's try, as a malformed
    /// message does.
    public func redeem(
        _ secret: InvitationSecret, address: (host: String, port: Int)?, perTarget: Duration = .seconds(5), waiting: Duration = .zero,
        accepting: @escaping @Sendable (ApplicationMessage) -> Bool = { _ in true }
    ) async -> AdmissionAnswer {
        // Daemons mDNS has yet to resolve (just started, or the network
        // slow) and peers added meanwhile are tried as they appear, until
        // `waiting` has passed.
        let deadline = ContinuousClock.now + waiting
        var tried: Set<String> = []
        // Only the invitation's maker admits: another member's "elsewhere" sends the search on.
        var elsewhere: AdmissionAnswer?
        while true {
            var targets: [DialTarget] = []
            if let address {
                targets.append(.host(address.host, port: address.port))
            } else {
                for sighting in directory.allSightings { targets += sighting.addresses.map { DialTarget.address($0) } }
                for key in staticTargets.keys.sorted() {
                    if let endpoint = Self.split(key) { targets.append(.host(endpoint.host, port: endpoint.port)) }
                }
            }
            for target in targets where tried.insert("\(target)").inserted {
                guard let answer = await redeem(secret, at: target, within: perTarget, accepting: accepting) else { continue }
                if case .refused(_, .elsewhere) = answer {
                    elsewhere = answer
                    continue
                }
                return answer
            }
            guard address == nil, ContinuousClock.now < deadline, !Task.isCancelled else { break }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return elsewhere ?? .noAnswer(tried: tried.count)
    }

    private static func split(_ key: String) -> (host: String, port: Int)? {
        guard let colon = key.lastIndex(of: ":"), let port = Int(key[key.index(after: colon)...]) else { return nil }
        var host = String(key[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host, port)
    }

    /// The most bytes of messages a member may send before its answer to
    /// an invitation (the circle's records and its players' names).
    static let preambleLimit = 32 << 20

    private nonisolated func redeem(
        _ secret: InvitationSecret, at target: DialTarget, within limit: Duration, accepting: @escaping @Sendable (ApplicationMessage) -> Bool
    ) async -> AdmissionAnswer? {
        let link: LinkChannel
        do {
            link = try await dial(target)
        } catch {
            return nil
        }
        let raw = link.channel
        let me = identity.peerID
        let identity = self.identity
        let answer = raw.eventLoop.makePromise(of: AdmissionAnswer?.self)
        let preamble = NIOLockedValueBox<(messages: [ApplicationMessage], bytes: Int)>(([], 0))
        raw.eventLoop.scheduleTask(in: .nanoseconds(Int64(limit.components.seconds) * 1_000_000_000)) {
            raw.close(promise: nil)
            answer.succeed(nil)
        }
        link.ended.whenComplete { _ in answer.succeed(nil) }
        let key = InvitationSecret.handshakeKey(for: secret.identity.peerID)
        let started = raw.eventLoop.flatSubmit {
            link.handler.value.start(SecretHandshake(role: .client, circle: key, identity: identity)) { result in
                raw.writeAndFlush(LinkMessage.admission(AdmissionRequest(secret: secret, joining: me, member: result.peer)), promise: nil)
                return PeerLinkHandler.Delivery(application: nil) { message in
                    switch message {
                    case .application(let message):
                        let held = preamble.withLockedValue { held in
                            held.bytes += message.body.count
                            held.messages.append(message)
                            return held.bytes
                        }
                        // A member sends the circle's records before its answer, far less than the limit.
                        guard accepting(message), held <= Self.preambleLimit else {
                            raw.close(promise: nil)
                            return
                        }
                    case .admitted(let keys):
                        answer.succeed(.admitted(member: result.peer, messages: preamble.withLockedValue { $0.messages }, keys: keys))
                        raw.close(promise: nil)
                    case .refused(let why):
                        answer.succeed(.refused(member: result.peer, why))
                        raw.close(promise: nil)
                    default:
                        break
                    }
                }
            }
        }
        started.whenFailure { _ in answer.succeed(nil) }
        return (try? await answer.futureResult.get()) ?? nil
    }
}
