// Frames after the handshake: the receiving half of a secret stream under
// the link's real key. Odd modes feed it garbage (a header, then frames);
// even modes seal the input's chunks with the real sender first, sometimes
// flipping a bit, so the decoders behind the encryption are reached: each
// opened frame is a peer message, a sync message inside it goes to a sync
// session over a replica holding a game, a hello's name is cleaned as the
// daemon does.
import FuzzSupport
import SweeperCrypto
import SweeperMembership
import SweeperMessages
import SweeperNet
import SweeperSync

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSecretStream(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = input.byte()
    let receiver: SecretStreamReceiver
    var sender: SecretStreamSender?
    if mode & 1 == 1 {
        guard let r = try? SecretStreamReceiver(key: Fixtures.streamKey, header: input.take(SecretStreamReceiver.headerLength)) else {
            return 0
        }
        receiver = r
    } else {
        let s = SecretStreamSender(key: Fixtures.streamKey)
        guard let r = try? SecretStreamReceiver(key: Fixtures.streamKey, header: s.header) else {
            check(false, "a receiver refused its sender's header")
            return 0
        }
        (sender, receiver) = (s, r)
    }
    var replica = Fixtures.replica
    var session = SyncSession()
    _ = session.start(replica: replica)
    var frames = 0
    while !input.isAtEnd && frames < 32 {
        frames += 1
        var frame: [UInt8]
        let plain: [UInt8]
        if let sender {
            let control = input.byte()
            plain = input.chunk()
            frame = sender.seal(plain)
            if control & 0x80 != 0 { frame[Int(control & 0x7F) % frame.count] ^= 1 }
            let opened = try? receiver.open(frame)
            if control & 0x80 == 0 { check(opened == plain, "a sealed frame did not open to its plaintext") }
            guard let opened else { return 0 }
            handle(opened, &replica, &session)
        } else {
            frame = input.chunk()
            guard let opened = try? receiver.open(frame) else { return 0 }
            handle(opened, &replica, &session)
        }
    }
    return 0
}

/// What runLink and the daemon's PeerInbox do with an opened frame.
func handle(_ bytes: [UInt8], _ replica: inout Replica, _ session: inout SyncSession) {
    guard let message = try? LinkMessage(decoding: bytes) else { return }
    check(message.encoded == bytes, "a link message does not re-encode to its bytes")
    switch message {
    case .application(let carried):
        // As the daemon's inbox takes it: decoded by type, or the peer is dropped.
        guard let decoded = try? PeerMessage(type: carried.type, body: carried.body) else { return }
        check(decoded.kind.rawValue == carried.type, "a peer message decoded as another type")
        handle(decoded, &replica, &session)
    case .hello(let hello):
        let name = hello.name.filter { !$0.isNewline && $0 != "\0" }
        _ = String(name.prefix(64))
    case .ping(let token):
        _ = LinkMessage.pong(token).encoded
    case .pong:
        break
    case .links(let peers):
        _ = Set(peers)
    case .admission(let request):
        // A member checks the invitation key's signature before anything else.
        _ = request.isValid(joining: Fixtures.players[0].peerID, member: Fixtures.players[1].peerID)
    case .admitted(let keys):
        check(!keys.isEmpty && keys.count <= 255, "an admission with \(keys.count) keys decoded")
    case .refused(let why):
        _ = why.description
    }
}

/// What the daemon's inbox does with an application message.
func handle(_ message: PeerMessage, _ replica: inout Replica, _ session: inout SyncSession) {
    check(message.encoded.count == 1 + message.body.count, "a peer message's encoding is not its type and body")
    switch message {
    case .presence(let note):
        // The presence table takes only authentic notes.
        var table = PresenceTable()
        if note.isAuthentic { _ = table.take(note, now: 0) }
    case .profile(let note):
        check(note.name.utf8.count <= 64, "a profile name of \(note.name.utf8.count) bytes decoded")
        _ = note.isAuthentic
    case .play(let note):
        // Its total cannot overflow: every length is bounded.
        check(note.total <= PlayNote.lengthLimit * UInt64(PlayNote.periodLimit + 1), "a share of played time of \(note.total) ms decoded")
        _ = note.isAuthentic
    case .addresses(let note):
        // At most 8 addresses, each one another host can dial, none twice; the encoding round-trips.
        check(note.addresses.count <= AddressNote.addressLimit, "an address note of \(note.addresses.count) addresses decoded")
        check(Set(note.addresses).count == note.addresses.count, "an address note naming one address twice decoded")
        check(note.addresses.allSatisfy { $0.port != 0 && ($0.ip.count == 4 || $0.ip.count == 16) }, "an address note with a bad address decoded")
        check((try? AddressNote(decoding: note.encoded)) == note, "an address note does not round-trip")
        _ = note.isAuthentic
    case .point(let note):
        // The point table takes only authentic, fresh notes, a few a second per author.
        var table = PointTable()
        if note.isAuthentic {
            let took = (0..<(PointTable.burst + 2)).filter { _ in table.take(note, now: 0, wallMillis: note.serial) }.count
            check(took == (note.serial > 0 ? 1 : 0), "one point note was taken \(took) times")
        }
    case .membership(let encoded):
        // As the daemon's CircleMembers takes them: every record decodes or the peer is dropped.
        var records: [MembershipRecord] = []
        for bytes in encoded {
            guard let record = try? MembershipRecord(decoding: bytes) else { return }
            records.append(record)
        }
        var membership = CircleMembership(firstKey: Fixtures.circle)
        membership.insert(records)
        for peer in membership.view.removed.keys { check(!membership.view.isMember(peer), "a removed device is a member") }
    case .sync(let sync):
        guard let step = try? session.receive(encoded: sync, replica: &replica) else { return }
        for reply in step.replies { _ = PeerMessage.sync(reply.encoded).encoded }
        _ = session.push(step.outcome.accepted, replica: replica)
        for (game, theirs) in session.peerHolds { _ = (replica.summary[game] ?? VersionVector()).lag(against: theirs) }
    }
}

@_cdecl("FuzzSecretStream_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    writeSeedsIfAsked {
        let replica = Fixtures.replica
        let segments = replica.segments(for: Fixtures.genesis.gameID, after: VersionVector())
        let messages: [LinkMessage] = [
            .hello(PeerHello(protocolVersion: PeerCapabilities.currentVersion, listenPort: 7455, name: "ann")),
            .application(ApplicationMessage(type: PeerMessage.Kind.sync.rawValue, body: SyncMessage.summary(replica.summary, wantsReply: true).encoded)),
            .application(ApplicationMessage(type: PeerMessage.Kind.sync.rawValue, body: SyncMessage.ops(segments).encoded)),
            .ping(1_234_567),
            .pong(1_234_567),
        ]
        // A point at a cell, authentic: the point table's checks run on it.
        let spot = PresenceSpot(game: Fixtures.genesis.gameID.bytes, x: 3, y: 4)
        let point = spot.map { PeerMessage.point(PointNote(signing: Fixtures.players[1], serial: 1_795_000_000_000, spot: $0)) }
        let pointMessage = point.map { LinkMessage.application(ApplicationMessage(type: $0.kind.rawValue, body: $0.body)) }
        // An address note of two addresses, authentic: its checks run on it.
        let listening = [ListenAddress(host: "198.18.0.1", port: 7455), ListenAddress(host: "2001:db8::1", port: 7456)].compactMap { $0 }
        let note = PeerMessage.addresses(AddressNote(signing: Fixtures.players[1], serial: 1_795_000_000_000, addresses: listening))
        let noteMessage = LinkMessage.application(ApplicationMessage(type: note.kind.rawValue, body: note.body))
        var valid: [UInt8] = [0]
        for m in messages + (pointMessage.map { [$0] } ?? []) + [noteMessage] { valid += [0] + chunk(m.encoded) }
        let sender = SecretStreamSender(key: Fixtures.streamKey)
        var garbage: [UInt8] = [1] + sender.header
        for m in messages.prefix(2) { garbage += chunk(sender.seal(m.encoded)) }
        return [valid, garbage, [0, 0x85] + chunk(messages[0].encoded)]
    }
    return runFuzzer(argc, argv, fuzzSecretStream)
}
