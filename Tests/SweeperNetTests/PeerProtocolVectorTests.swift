import CSodium
import Foundation
import SweeperConventions
import SweeperGame
import SweeperMembership
import SweeperMessages
import Testing

@testable import SweeperCrypto
@testable import SweeperNet
@testable import SweeperSync

/// Docs/peer-protocol.md against the implementation: every test vector in
/// the document is recomputed here from its inputs, with the same code the
/// daemon runs, and every output it lists must match byte for byte. A
/// vector that lists an output this test does not compute, or lacks one it
/// does, fails too, so the document cannot drift from the daemon.
@Suite struct PeerProtocolVectorTests {
    static let document = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Docs/peer-protocol.md")

    /// One vector of the document: its fields in order, values as written
    /// (continuation lines joined).
    struct Vector {
        var name: String
        var fields: [(key: String, value: String)] = []

        subscript(key: String) -> String? { fields.first { $0.key == key }?.value }

        /// A field's bytes, from hex.
        func bytes(_ key: String) throws -> [UInt8] {
            let text = try #require(self[key], "vector \(name) lacks \(key)")
            return try #require(Hex.decode(text), "vector \(name): \(key) is not hex")
        }

        /// A field's text, from a quoted string.
        func text(_ key: String) throws -> String {
            let text = try #require(self[key], "vector \(name) lacks \(key)")
            #expect(text.hasPrefix("\"") && text.hasSuffix("\"") && text.count >= 2, "vector \(name): \(key) is not quoted")
            return String(text.dropFirst().dropLast())
        }

        /// A field's decimal number.
        func number(_ key: String) throws -> UInt64 {
            let text = try #require(self[key], "vector \(name) lacks \(key)")
            return try #require(UInt64(text), "vector \(name): \(key) is not a number")
        }
    }

    /// The vectors: fenced blocks whose first line is `vector: NAME`, then
    /// `key: value` lines; a line that starts with spaces continues the
    /// value before it.
    static func vectors() throws -> [String: Vector] {
        let text = try String(contentsOf: document, encoding: .utf8)
        var out: [String: Vector] = [:]
        var current: Vector?
        var inFence = false
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw)
            if line.hasPrefix("```") {
                if let v = current { out[v.name] = v }
                current = nil
                inFence.toggle()
                continue
            }
            guard inFence else { continue }
            if line.hasPrefix("vector: ") {
                current = Vector(name: String(line.dropFirst("vector: ".count)))
            } else if var v = current, line.first == " ", let last = v.fields.popLast() {
                v.fields.append((last.key, last.value + line.trimmingCharacters(in: .whitespaces)))
                current = v
            } else if var v = current, let colon = line.firstIndex(of: ":") {
                let key = String(line[..<colon])
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                v.fields.append((key, value))
                current = v
            }
        }
        return out
    }

    /// Checks that `vector` lists exactly `inputs` and `outputs`, and each
    /// output as computed.
    static func check(_ vector: Vector, inputs: Set<String>, outputs: [(String, String)]) {
        for (key, value) in outputs {
            guard let written = vector[key] else {
                Issue.record("vector \(vector.name) lacks \(key): \(value)")
                continue
            }
            #expect(written == value, "vector \(vector.name): \(key) is\n\(value)\nnot\n\(written)")
        }
        let known = inputs.union(outputs.map(\.0))
        for field in vector.fields where !known.contains(field.key) {
            Issue.record("vector \(vector.name) has \(field.key), which nothing checks")
        }
    }

    static func vector(_ name: String) throws -> Vector {
        try #require(try vectors()[name], "Docs/peer-protocol.md has no vector \(name)")
    }

    static func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

    // MARK: Keys and names

    /// The identities and circle every other vector uses.
    struct Cast {
        let alice: SigningIdentity
        let bob: SigningIdentity
        let circle: CircleKey

        init() throws {
            let v = try PeerProtocolVectorTests.vector("identities")
            alice = try SigningIdentity(seed: v.bytes("alice-seed"))
            bob = try SigningIdentity(seed: v.bytes("bob-seed"))
            circle = try CircleKey(bytes: v.bytes("circle-key"))
        }
    }

    @Test func identitiesPeerIDsCircleTagAndMembershipProofs() throws {
        let v = try Self.vector("identities")
        let cast = try Cast()
        Self.check(
            v, inputs: ["alice-seed", "bob-seed", "circle-key"],
            outputs: [
                ("alice-key", Self.hex(cast.alice.peerID.bytes)),
                ("alice-peer-id", "\"\(cast.alice.peerID.description)\""),
                ("bob-key", Self.hex(cast.bob.peerID.bytes)),
                ("bob-peer-id", "\"\(cast.bob.peerID.description)\""),
                ("circle-tag", "\"\(cast.circle.tag)\""),
                ("alice-membership-proof", Self.hex(cast.circle.membershipProof(for: cast.alice.peerID))),
                ("bob-membership-proof", Self.hex(cast.circle.membershipProof(for: cast.bob.peerID))),
            ])
        #expect(try PeerID(parsing: v.text("alice-peer-id")) == cast.alice.peerID)
    }

    @Test func inviteCode() throws {
        let v = try Self.vector("invite-code")
        let cast = try Cast()
        let code = InviteCode.encode(cast.circle)
        Self.check(v, inputs: [], outputs: [("code", "\"\(code)\"")])
        #expect(try InviteCode.decode(v.text("code")) == cast.circle)
    }

    /// An invitation's code, keys and the admission message of its holder.
    @Test func invitation() throws {
        let v = try Self.vector("invitation")
        let cast = try Cast()
        let secret = try #require(InvitationSecret(bytes: try v.bytes("secret")))
        let request = AdmissionRequest(secret: secret, joining: cast.bob.peerID, member: cast.alice.peerID)
        let root = try Self.vector("membership-v2").bytes("founding-hash")
        Self.check(
            v, inputs: ["secret"],
            outputs: [
                ("code", "\"\(InviteCode.encode(secret))\""),
                ("pinned-code", "\"\(InviteCode.encode(secret, root: root))\""),
                ("invitation-key", Self.hex(secret.identity.peerID.bytes)),
                ("handshake-key", Self.hex(InvitationSecret.handshakeKey(for: secret.identity.peerID).bytes)),
                ("admission", Self.hex(LinkMessage.admission(request).encoded)),
                ("refused-expired", Self.hex(LinkMessage.refused(.expired).encoded)),
            ])
        #expect(try InviteCode.read(v.text("code")) == .invitation(secret))
        #expect(try InviteCode.read(v.text("pinned-code")) == .pinned(secret, root: Array(root.prefix(InviteCode.rootByteCount))))
        guard case .admission(let decoded) = try LinkMessage(decoding: v.bytes("admission")) else {
            Issue.record("vector invitation: not an admission")
            return
        }
        #expect(decoded.isValid(joining: cast.bob.peerID, member: cast.alice.peerID))
        #expect(!decoded.isValid(joining: cast.alice.peerID, member: cast.bob.peerID))
    }

    @Test func txtRecord() throws {
        let v = try Self.vector("txt-record")
        let cast = try Cast()
        Self.check(
            v, inputs: [],
            outputs: [
                ("v", "\"\(PeerCapabilities.currentVersion)\""),
                ("id", "\"\(cast.alice.peerID.description)\""),
                ("circle", "\"\(cast.circle.tag)\""),
                ("name", "\"Alice\""),
            ])
    }

    // MARK: The link

    @Test func secretHandshake() throws {
        let v = try Self.vector("handshake")
        let cast = try Cast()
        let clientSecret = SecretBytes(copying: try v.bytes("client-ephemeral-secret"))
        let serverSecret = SecretBytes(copying: try v.bytes("server-ephemeral-secret"))
        var client = SecretHandshake(role: .client, circle: cast.circle, identity: cast.alice, ephemeralSecret: clientSecret)
        var server = SecretHandshake(role: .server, circle: cast.circle, identity: cast.bob, ephemeralSecret: serverSecret)
        let start = client.start()
        let m1 = try #require(start)
        guard case .send(let m2) = try server.receive(m1), case .send(let m3) = try client.receive(m2),
            case .finish(let m4Optional, let serverResult) = try server.receive(m3), let m4 = m4Optional,
            case .finish(nil, let clientResult) = try client.receive(m4)
        else {
            Issue.record("the handshake did not run in four messages")
            return
        }
        #expect(clientResult.peer == cast.bob.peerID && serverResult.peer == cast.alice.peerID)
        #expect(clientResult.sendKey == serverResult.receiveKey && clientResult.receiveKey == serverResult.sendKey)

        // The intermediate values, computed here as the document says.
        let a = Array(m1[0..<32]), b = Array(m2[0..<32])
        let shared = try Self.x25519(secret: v.bytes("client-ephemeral-secret"), public: b)
        #expect(shared == (try Self.x25519(secret: v.bytes("server-ephemeral-secret"), public: a)))
        let label = { (l: String) in Array("sweeper/shs/v1/\(l)".utf8) }
        let sharedHash = Blake2b.hash(parts: [label("shared"), shared], key: nil)
        let clientAuthKey = Blake2b.hash(parts: [label("client-auth"), shared, a, b], key: cast.circle.secret)
        let serverAuthKey = Blake2b.hash(parts: [label("server-auth"), shared, a, b, cast.alice.peerID.bytes], key: cast.circle.secret)
        #expect(Array(m1[32...]) == Blake2b.hash(parts: [label("hello"), a], key: cast.circle.secret))

        Self.check(
            v, inputs: ["client-ephemeral-secret", "server-ephemeral-secret"],
            outputs: [
                ("client-ephemeral-public", Self.hex(a)),
                ("server-ephemeral-public", Self.hex(b)),
                ("message-1", Self.hex(m1)),
                ("message-2", Self.hex(m2)),
                ("shared-secret", Self.hex(shared)),
                ("shared-hash", Self.hex(sharedHash)),
                ("client-auth-key", Self.hex(clientAuthKey)),
                ("message-3", Self.hex(m3)),
                ("server-auth-key", Self.hex(serverAuthKey)),
                ("message-4", Self.hex(m4)),
                ("client-to-server-key", Self.hex(clientResult.sendKey.bytes)),
                ("server-to-client-key", Self.hex(clientResult.receiveKey.bytes)),
            ])
    }

    /// X25519 (libsodium's `crypto_scalarmult`), computed here rather than
    /// taken from the handshake.
    static func x25519(secret: [UInt8], public key: [UInt8]) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        #expect(crypto_scalarmult(&out, secret, key) == 0)
        return out
    }

    @Test func secretStreamFrames() throws {
        let v = try Self.vector("secret-stream")
        let handshake = try Self.vector("handshake")
        let key = SecretBytes(copying: try handshake.bytes("client-to-server-key"))
        // A hello of peer protocol 4, as the frames in the document were sealed from one.
        let plain1 = LinkMessage.hello(PeerHello(protocolVersion: 4, listenPort: 7455, name: "Alice")).encoded
        let plain2 = LinkMessage.ping(0x0102_0304_0506_0708).encoded
        guard v["header"] != nil else {
            // The header is random: a document without one is given one run's frames to copy.
            let sender = SecretStreamSender(key: key)
            Issue.record("vector secret-stream lacks header: \(Self.hex(sender.header))")
            Issue.record("vector secret-stream lacks frame-1: \(Self.hex(sender.seal(plain1)))")
            Issue.record("vector secret-stream lacks frame-2: \(Self.hex(sender.seal(plain2)))")
            return
        }
        let header = try v.bytes("header")
        let receiver = try SecretStreamReceiver(key: key, header: header)
        #expect(try receiver.open(v.bytes("frame-1")) == plain1)
        #expect(try receiver.open(v.bytes("frame-2")) == plain2)
        // Replaying a frame fails: each frame's nonce follows from the last.
        #expect(throws: SecretStreamError.forged) { try receiver.open(try v.bytes("frame-2")) }
        Self.check(
            v, inputs: ["header", "frame-1", "frame-2"],
            outputs: [
                ("plain-1", Self.hex(plain1)),
                ("plain-2", Self.hex(plain2)),
            ])
    }

    @Test func linkMessages() throws {
        let v = try Self.vector("link-messages")
        let cast = try Cast()
        let messages: [(String, LinkMessage)] = [
            ("hello", .hello(PeerHello(protocolVersion: PeerCapabilities.currentVersion, listenPort: 7455, name: "Alice"))),
            ("ping", .ping(0x0102_0304_0506_0708)),
            ("pong", .pong(0x0102_0304_0506_0708)),
            ("links", .links([cast.alice.peerID, cast.bob.peerID])),
        ]
        Self.check(v, inputs: [], outputs: messages.map { ($0.0, Self.hex($0.1.encoded)) })
        for (key, message) in messages {
            #expect(try LinkMessage(decoding: v.bytes(key)) == message)
        }
    }

    /// Alice's founding record of version 1 (the release before roles), an
    /// invitation she makes after it, and the link message that carries
    /// both: still read, to migrate such a circle, in which Alice is then
    /// the founder.
    @Test func membershipRecordsOfVersion1() throws {
        let v = try Self.vector("membership")
        let cast = try Cast()
        let made = try v.number("made")
        let invitation = try SigningIdentity(seed: v.bytes("invitation-seed"))
        let circle = CircleID(firstKey: cast.circle)
        let founding = LegacyRecord(
            signing: cast.alice, circle: circle, madeMillis: made, parents: [],
            change: .found(proof: cast.circle.membershipProof(for: cast.alice.peerID)))
        let invite = LegacyRecord(
            signing: cast.alice, circle: circle, madeMillis: made + 1, parents: [founding.hash],
            change: .invite(key: invitation.peerID, expiresMillis: try v.number("expires")))
        let message = PeerMessage.membership([founding.encoded, invite.encoded])
        Self.check(
            v, inputs: ["made", "invitation-seed", "expires"],
            outputs: [
                ("circle-id", Self.hex(circle.bytes)),
                ("founding", Self.hex(founding.encoded)),
                ("founding-hash", Self.hex(founding.hash.bytes)),
                ("invitation-key", Self.hex(invitation.peerID.bytes)),
                ("invite", Self.hex(invite.encoded)),
                ("message", Self.hex(message.encoded)),
            ])
        let records = try [v.bytes("founding"), v.bytes("invite")].map { try LegacyRecord(decoding: $0) }
        let membership = CircleMembership(firstKey: cast.circle, legacy: records)
        #expect(membership.view.role(of: cast.alice.peerID) == .founder)
        #expect(membership.view.invitations[invitation.peerID]?.state == .open)
        #expect(try PeerMessage(decoding: v.bytes("message")) == message)
    }

    /// Version 2: Alice founds the circle, invites, admits Bob with that
    /// invitation and names him an admin, each record the next in her
    /// chain; the link message carries all four.
    @Test func membershipRecordsOfVersion2() throws {
        let v = try Self.vector("membership-v2")
        let cast = try Cast()
        let made = try v.number("made")
        let invitation = try SigningIdentity(seed: v.bytes("invitation-seed"))
        let circle = CircleID(firstKey: cast.circle)
        let bob = cast.bob.peerID
        let founding = MembershipRecord(
            signing: cast.alice, circle: circle, madeMillis: made, seq: 1, previous: nil, parents: [],
            change: .found(proof: cast.circle.membershipProof(for: cast.alice.peerID)))
        let invite = MembershipRecord(
            signing: cast.alice, circle: circle, madeMillis: made + 1, seq: 2, previous: founding.hash, parents: [founding.hash],
            change: .invite(key: invitation.peerID, expiresMillis: try v.number("expires")))
        let admit = MembershipRecord(
            signing: cast.alice, circle: circle, madeMillis: made + 2, seq: 3, previous: invite.hash, parents: [invite.hash],
            change: .admit(subject: bob, invitation: invitation.peerID, name: "Bob", through: 0))
        let promote = MembershipRecord(
            signing: cast.alice, circle: circle, madeMillis: made + 3, seq: 4, previous: admit.hash, parents: [admit.hash],
            change: .promote(subject: bob, through: 0))
        let message = PeerMessage.membership([founding, invite, admit, promote].map(\.encoded))
        Self.check(
            v, inputs: ["made", "invitation-seed", "expires"],
            outputs: [
                ("founding", Self.hex(founding.encoded)),
                ("founding-hash", Self.hex(founding.hash.bytes)),
                ("invite", Self.hex(invite.encoded)),
                ("admit", Self.hex(admit.encoded)),
                ("promote", Self.hex(promote.encoded)),
                ("message", Self.hex(message.encoded)),
            ])
        var membership = CircleMembership(firstKey: cast.circle)
        let records = try ["founding", "invite", "admit", "promote"].map { try MembershipRecord(decoding: v.bytes($0)) }
        #expect(membership.insert(records).added.count == 4)
        #expect(membership.view.role(of: cast.alice.peerID) == .founder)
        #expect(membership.view.role(of: bob) == .admin)
        #expect(membership.view.members[bob]?.name == "Bob")
        #expect(membership.view.invitations[invitation.peerID]?.state == .used(by: bob))
        #expect(try PeerMessage(decoding: v.bytes("message")) == message)

        // Protocol 10: the next record of Alice's chain turns Bob's invitations
        // off. Bob is an admin by then, and admins always invite: it is kept
        // and changes nothing.
        let w = try Self.vector("invitation-switch")
        let off = MembershipRecord(
            signing: cast.alice, circle: circle, madeMillis: try w.number("made"), seq: 5, previous: promote.hash, parents: [promote.hash],
            change: .invitations(subject: bob, through: 0, allowed: false))
        Self.check(w, inputs: ["made"], outputs: [("record", Self.hex(off.encoded))])
        let decoded = try MembershipRecord(decoding: w.bytes("record"))
        #expect(decoded.change == .invitations(subject: bob, through: 0, allowed: false))
        #expect(membership.insert([decoded]).added.count == 1)
        #expect(membership.view.members[bob]?.invites == true)
    }

    /// Protocol 16: a cut names records, and a fork voids the forker. After
    /// the records of `membership-v2`, Bob writes an invitation (his place
    /// 1); Alice removes him, naming it; with his old key Bob writes a
    /// second invitation at his place 1. The first counts (revoked with
    /// its removed maker), the second is void, and Bob is shown as forked at 1.
    @Test func cutsAndForks() throws {
        let v = try Self.vector("membership-v2")
        let w = try Self.vector("cut-and-fork")
        let cast = try Cast()
        let circle = CircleID(firstKey: cast.circle)
        let records = try ["founding", "invite", "admit", "promote"].map { try MembershipRecord(decoding: v.bytes($0)) }
        let promote = records[3]
        let made = try w.number("made")
        let first = try SigningIdentity(seed: w.bytes("first-key-seed")).peerID
        let second = try SigningIdentity(seed: w.bytes("second-key-seed")).peerID
        let expires = made + 86_400_000
        let invite = MembershipRecord(
            signing: cast.bob, circle: circle, madeMillis: made, seq: 1, previous: nil, parents: [promote.hash],
            change: .invite(key: first, expiresMillis: expires))
        let removal = MembershipRecord(
            signing: cast.alice, circle: circle, madeMillis: made + 1, seq: 5, previous: promote.hash, parents: [invite.hash],
            change: .remove(subject: cast.bob.peerID, through: 1, kept: [:]))
        let fork = MembershipRecord(
            signing: cast.bob, circle: circle, madeMillis: made + 2, seq: 1, previous: nil, parents: [promote.hash],
            change: .invite(key: second, expiresMillis: expires))
        var membership = CircleMembership(firstKey: cast.circle)
        membership.insert(records)
        let decoded = try [fork, invite, removal].map { try MembershipRecord(decoding: $0.encoded) }
        #expect(membership.insert(decoded).added.count == 3)
        let view = membership.view
        func state(_ key: PeerID) -> String {
            switch view.invitations[key]?.state {
            case .open: "open"
            case .used: "used"
            case .revoked: "revoked"
            case nil: "void"
            }
        }
        Self.check(
            w, inputs: ["made", "first-key-seed", "second-key-seed"],
            outputs: [
                ("invite", Self.hex(invite.encoded)),
                ("removal", Self.hex(removal.encoded)),
                ("fork", Self.hex(fork.encoded)),
                ("first-invitation", state(first)),
                ("second-invitation", state(second)),
                ("bob-removed-through", view.removed[cast.bob.peerID].map { String($0.through) } ?? "-"),
                ("bob-forked-at", (view.equivocations[cast.bob.peerID] ?? []).map(String.init).joined(separator: ", ")),
            ])
    }

    // MARK: Ops, segments and sync messages

    /// The vectors' game and its ops, made from the inputs of the `game` vector.
    struct Game {
        let genesis: Genesis
        let id: GameID
        let genesisOp: Op
        let reveal: Op
        let mark: Op
        let assisted: Op

        init(_ cast: Cast) throws {
            let v = try PeerProtocolVectorTests.vector("game")
            let width = Int(try v.number("width")), height = Int(try v.number("height"))
            let mines = try #require(v["mine-cells"]).split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            let start = Int(try v.number("start-cell"))
            let geometry = BoardGeometry(width: width, height: height)
            let parameters = try GameParameters(width: width, height: height, mines: mines.count, start: geometry.cell(at: start))
            let layout = try MineLayout(geometry: geometry, mineIndices: mines)
            genesis = try Genesis(
                parameters: parameters, layout: layout, questionMarks: true,
                seed: try v.number("seed"), createdAtMillis: try v.number("created"))
            id = genesis.gameID(creator: cast.alice.peerID)
            let reveal = try PeerProtocolVectorTests.vector("op-reveal")
            let mark = try PeerProtocolVectorTests.vector("op-mark")
            let assisted = try PeerProtocolVectorTests.vector("op-assisted")
            genesisOp = Op(
                signing: cast.alice, circle: cast.circle, gameID: id, seq: 1, lamport: 1, previous: .none,
                wallClockMillis: genesis.createdAtMillis, payload: .genesis(genesis))
            let cells = try #require(reveal["cells"]).split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            self.reveal = Op(
                signing: cast.bob, circle: cast.circle, gameID: id, seq: 1, lamport: 2, previous: .none,
                wallClockMillis: try reveal.number("wall-clock"), payload: .reveal(CellRuns(cells: cells)))
            self.mark = Op(
                signing: cast.bob, circle: cast.circle, gameID: id, seq: 2, lamport: 3, previous: self.reveal.hash,
                wallClockMillis: try mark.number("wall-clock"), payload: .mark(cell: Int(try mark.number("cell")), mark: .flag))
            self.assisted = Op(
                signing: cast.alice, circle: cast.circle, gameID: id, seq: 2, lamport: 4, previous: genesisOp.hash,
                wallClockMillis: try assisted.number("wall-clock"), payload: .assisted)
        }
    }

    static func opOutputs(_ op: Op) throws -> [(String, String)] {
        var payload = ByteWriter()
        op.payload.encode(into: &payload)
        return [
            ("payload", hex(payload.bytes)),
            ("canonical", hex(op.canonicalBytes)),
            ("hash", hex(op.hash.bytes)),
            ("signature", hex(try #require(op.signature).bytes)),
        ]
    }

    @Test func opsOfEveryKind() throws {
        let cast = try Cast()
        let game = try Game(cast)
        var genesisBytes = ByteWriter()
        game.genesis.encode(into: &genesisBytes)
        Self.check(
            try Self.vector("game"), inputs: ["width", "height", "mine-cells", "start-cell", "seed", "created"],
            outputs: [
                ("genesis", Self.hex(genesisBytes.bytes)),
                ("game-id", Self.hex(game.id.bytes)),
            ])
        Self.check(try Self.vector("op-genesis"), inputs: [], outputs: try Self.opOutputs(game.genesisOp))
        Self.check(try Self.vector("op-reveal"), inputs: ["cells", "wall-clock"], outputs: try Self.opOutputs(game.reveal))
        Self.check(try Self.vector("op-mark"), inputs: ["cell", "wall-clock"], outputs: try Self.opOutputs(game.mark))
        Self.check(try Self.vector("op-assisted"), inputs: ["wall-clock"], outputs: try Self.opOutputs(game.assisted))

        // Every op verifies, and a replica accepts all four and agrees on the board.
        var replica = Replica(circle: cast.circle)
        for op in [game.genesisOp, game.reveal, game.mark, game.assisted] {
            #expect(op.hasValidSignature)
            #expect(replica.insert(op).accepted.count == 1)
        }

        // Protocol 12: Alice asks for a hint and is shown cell 44, then
        // says she chose the game's seed.
        let h = try Self.vector("op-hint")
        let hint = Op(
            signing: cast.alice, circle: cast.circle, gameID: game.id, seq: 3, lamport: 5, previous: game.assisted.hash,
            wallClockMillis: try h.number("wall-clock"), payload: .hint(cell: Int(try h.number("cell"))))
        Self.check(h, inputs: ["cell", "wall-clock"], outputs: try Self.opOutputs(hint))
        let sd = try Self.vector("op-seeded")
        let seeded = Op(
            signing: cast.alice, circle: cast.circle, gameID: game.id, seq: 4, lamport: 6, previous: hint.hash,
            wallClockMillis: try sd.number("wall-clock"), payload: .seeded)
        Self.check(sd, inputs: ["wall-clock"], outputs: try Self.opOutputs(seeded))
        #expect(replica.insert(hint).accepted.count == 1 && replica.insert(seeded).accepted.count == 1)
        let state = try #require(replica.state(of: game.id))
        #expect(state.hintsBy == [cast.alice.peerID: 1] && state.isSeeded && state.isAssisted)
        // Only the creator says it chose the seed.
        let bobs = Op(
            signing: cast.bob, circle: cast.circle, gameID: game.id, seq: 3, lamport: 7, previous: game.mark.hash,
            wallClockMillis: 1, payload: .seeded)
        #expect(replica.insert(bobs).rejected.first?.reason == .notPlayer)

        // The daily op (this game is not the day's board: the op's encoding
        // alone), and the seed of that day's board in Alice's circle.
        let dv = try Self.vector("op-daily")
        let day = Int(try dv.number("day"))
        let daily = Op(
            signing: cast.alice, circle: cast.circle, gameID: game.id, seq: 5, lamport: 7, previous: seeded.hash,
            wallClockMillis: try dv.number("wall-clock"), payload: .daily(day: day))
        let seed = DailyBoard.seed(circle: cast.circle, day: day)
        Self.check(dv, inputs: ["day", "wall-clock"], outputs: try Self.opOutputs(daily) + [("board-seed", String(seed, radix: 16))])
        #expect(replica.insert(daily).accepted.count == 1 && replica.state(of: game.id)?.dailyDay == day)
    }

    /// A game whose creator chose the players, the players op and the archive op.
    @Test func opsOfRoles() throws {
        let cast = try Cast()
        let game = try Game(cast)
        let v = try Self.vector("game-players")
        let g = game.genesis
        let genesis = try Genesis(
            parameters: g.parameters, layout: g.layout, questionMarks: g.questionMarks, seed: g.seed, createdAtMillis: g.createdAtMillis,
            players: [cast.bob.peerID])
        let id = genesis.gameID(creator: cast.alice.peerID)
        var genesisBytes = ByteWriter()
        genesis.encode(into: &genesisBytes)
        Self.check(v, inputs: [], outputs: [("genesis", Self.hex(genesisBytes.bytes)), ("game-id", Self.hex(id.bytes))])
        let genesisOp = Op(
            signing: cast.alice, circle: cast.circle, gameID: id, seq: 1, lamport: 1, previous: .none,
            wallClockMillis: genesis.createdAtMillis, payload: .genesis(genesis))
        let p = try Self.vector("op-players")
        let carol = try SigningIdentity(seed: p.bytes("carol-seed"))
        let players = Op(
            signing: cast.alice, circle: cast.circle, gameID: id, seq: 2, lamport: 2, previous: genesisOp.hash,
            wallClockMillis: try p.number("wall-clock"), payload: .players([carol.peerID]))
        Self.check(p, inputs: ["carol-seed", "wall-clock"], outputs: try Self.opOutputs(players))
        let a = try Self.vector("op-archive")
        let archive = Op(
            signing: cast.bob, circle: cast.circle, gameID: id, seq: 1, lamport: 3, previous: .none,
            wallClockMillis: try a.number("wall-clock"), payload: .archive(true))
        Self.check(a, inputs: ["wall-clock"], outputs: try Self.opOutputs(archive))

        // A replica takes them; carol's move counts only after alice's op.
        var replica = Replica(circle: cast.circle)
        for op in [genesisOp, archive] { #expect(replica.insert(op).accepted.count == 1) }
        let carolsMove = Op(
            signing: carol, circle: cast.circle, gameID: id, seq: 1, lamport: 4, previous: .none,
            wallClockMillis: archive.wallClockMillis, payload: .mark(cell: 0, mark: .flag))
        #expect(replica.insert(carolsMove).rejection(of: carolsMove) == .notPlayer)
        #expect(replica.insert(players).accepted.count == 1)
        #expect(replica.insert(carolsMove).accepted.count == 1)
        #expect(replica.state(of: id)?.isArchived == true)
        for key in ["op-players", "op-archive"] {
            let vector = try Self.vector(key)
            #expect(try Op(decoding: vector.bytes("canonical") + [1] + vector.bytes("signature")).hasValidSignature)
        }
    }

    /// Protocol 14: the same board as a race of Alice against Bob, and
    /// Bob giving up his board.
    @Test func opsOfRaces() throws {
        let cast = try Cast()
        let g = try Game(cast).genesis
        let genesis = try Genesis(
            parameters: g.parameters, layout: g.layout, questionMarks: g.questionMarks, seed: g.seed, createdAtMillis: g.createdAtMillis,
            players: [cast.bob.peerID], isRace: true)
        let id = genesis.gameID(creator: cast.alice.peerID)
        var genesisBytes = ByteWriter()
        genesis.encode(into: &genesisBytes)
        Self.check(try Self.vector("game-race"), inputs: [], outputs: [("genesis", Self.hex(genesisBytes.bytes)), ("game-id", Self.hex(id.bytes))])
        let genesisOp = Op(
            signing: cast.alice, circle: cast.circle, gameID: id, seq: 1, lamport: 1, previous: .none,
            wallClockMillis: genesis.createdAtMillis, payload: .genesis(genesis))
        let r = try Self.vector("op-resign")
        let resign = Op(
            signing: cast.bob, circle: cast.circle, gameID: id, seq: 1, lamport: 2, previous: .none,
            wallClockMillis: try r.number("wall-clock"), payload: .resign)
        Self.check(r, inputs: ["wall-clock"], outputs: try Self.opOutputs(resign))
        var replica = Replica(circle: cast.circle)
        for op in [genesisOp, resign] { #expect(replica.insert(op).accepted.count == 1) }
        let state = try #require(replica.state(of: id))
        #expect(state.isRace && state.lane(of: cast.bob.peerID)?.status == .lost && state.lane(of: cast.alice.peerID)?.status == .playing)
        #expect(try Op(decoding: r.bytes("canonical") + [1] + r.bytes("signature")).hasValidSignature)
    }

    /// A private game: Alice's sealed genesis (Bob plays) and Bob's sealed reveal.
    @Test func privateGame() throws {
        let cast = try Cast()
        let game = try Game(cast)
        let v = try Self.vector("private-game")
        let key = try #require(GameKey(bytes: try v.bytes("game-key")))
        // Sealed boxes take a fresh ephemeral key each time: the document
        // gives the two sealed keys as inputs, and both must open to the key.
        var sealed: [PeerID: [UInt8]] = [:]
        for (name, who) in [("alice", cast.alice), ("bob", cast.bob)] {
            guard let bytes = try? v.bytes("\(name)-sealed-key"), bytes.count == GameKey.sealedByteCount else {
                Issue.record("vector private-game: \(name)-sealed-key could be \(Self.hex(key.sealed(to: who.peerID) ?? []))")
                return
            }
            #expect(GameKey(opening: bytes, with: who) == key, "\(name)-sealed-key does not open to the game key")
            sealed[who.peerID] = bytes
        }
        let g = game.genesis
        let inner = try Genesis(
            parameters: g.parameters, layout: g.layout, questionMarks: g.questionMarks, seed: g.seed, createdAtMillis: g.createdAtMillis,
            players: [cast.bob.peerID])
        var innerBytes = ByteWriter()
        inner.encode(into: &innerBytes)
        let payload = PrivateGenesis(
            readers: sealed.map { SealedKey(player: $0.key, sealed: $0.value) },
            sealedGenesis: key.seal(innerBytes.bytes, nonce: try v.bytes("genesis-nonce")))
        let id = payload.gameID(creator: cast.alice.peerID)
        let genesisOp = Op(
            signing: cast.alice, circle: cast.circle, gameID: id, seq: 1, lamport: 1, previous: .none,
            wallClockMillis: inner.createdAtMillis, payload: .privateGenesis(payload))
        let cells = try #require(v["cells"]).split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        var move = ByteWriter()
        OpPayload.reveal(CellRuns(cells: cells)).encode(into: &move)
        let reveal = Op(
            signing: cast.bob, circle: cast.circle, gameID: id, seq: 1, lamport: 2, previous: .none,
            wallClockMillis: try v.number("wall-clock"), payload: .sealed(key.seal(move.bytes, nonce: try v.bytes("move-nonce"))))
        let genesisOutputs = try Self.opOutputs(genesisOp).map { ("genesis-\($0.0)", $0.1) }
        let revealOutputs = try Self.opOutputs(reveal).map { ("reveal-\($0.0)", $0.1) }
        Self.check(
            v, inputs: ["game-key", "alice-sealed-key", "bob-sealed-key", "genesis-nonce", "move-nonce", "cells", "wall-clock"],
            outputs: [("game-id", Self.hex(id.bytes))] + genesisOutputs + revealOutputs)

        // Bob reads the game and the reveal; Carol, a member who does not play, holds both unread.
        var bob = Replica(circle: cast.circle, reader: cast.bob)
        var carol = Replica(circle: cast.circle, reader: try SigningIdentity(seed: [UInt8](repeating: 0x43, count: 32)))
        for op in [genesisOp, reveal] {
            #expect(bob.insert(op).accepted.count == 1)
            #expect(carol.insert(op).accepted.count == 1)
        }
        #expect(bob.state(of: id)?.genesis.layout == g.layout && bob.state(of: id)?.firstRevealer(of: cells[0]) == cast.bob.peerID)
        #expect(carol.state(of: id) == nil && carol.summary[id]?.opCount == 2)
    }

    @Test func segmentAndSyncMessages() throws {
        let cast = try Cast()
        let game = try Game(cast)
        let segment = try #require(OpSegment(verifiedOps: [game.reveal.with(signature: nil), game.mark]))
        let summary = SyncMessage.summary([game.id: VersionVector(heads: [cast.alice.peerID: 2, cast.bob.peerID: 2])], wantsReply: true)
        let ops = SyncMessage.ops([segment])
        Self.check(try Self.vector("segment"), inputs: [], outputs: [("segment", Self.hex(segment.encoded))])
        Self.check(
            try Self.vector("sync-messages"), inputs: [],
            outputs: [
                ("summary", Self.hex(summary.encoded)),
                ("ops", Self.hex(ops.encoded)),
                ("link-message", Self.hex(PeerMessage.sync(summary.encoded).encoded)),
                ("interest", Self.hex(SyncMessage.interest(.only([game.id])).encoded)),
            ])
        #expect(try SyncMessage(decoding: try Self.vector("sync-messages").bytes("interest")) == .interest(.only([game.id])))
        // Protocol 10: the same summary in a part, ended by an empty summary
        // asking for an answer; a session takes the two as the summary.
        let part = SyncMessage.summaryPart([game.id: VersionVector(heads: [cast.alice.peerID: 2, cast.bob.peerID: 2])])
        let end = SyncMessage.summary([:], wantsReply: true)
        Self.check(try Self.vector("summary-parts"), inputs: [], outputs: [("part", Self.hex(part.encoded)), ("end", Self.hex(end.encoded))])
        #expect(try SyncMessage(decoding: try Self.vector("summary-parts").bytes("part")) == part)
        // Protocol 11: a device that does not hold the game asks what it is;
        // the holder describes it (playing, 250 thousandths revealed).
        let describe = SyncMessage.describe([game.id])
        let described = SyncMessage.descriptions([
            GameDescription(creator: cast.alice.peerID, genesis: game.genesis, status: .playing, progressPermille: 250)
        ])
        Self.check(
            try Self.vector("game-descriptions"), inputs: [],
            outputs: [
                ("describe", Self.hex(describe.encoded)), ("descriptions", Self.hex(described.encoded)),
            ])
        let read = try SyncMessage(decoding: try Self.vector("game-descriptions").bytes("descriptions"))
        guard case .descriptions(let list) = read, list.first?.gameID == game.id else {
            Issue.record("the descriptions vector does not describe the game: \(read)")
            return
        }
        // What the document says decodes to the same, and a replica that
        // holds the genesis takes the segment with its one signature.
        let decoded = try OpSegment(decoding: try Self.vector("segment").bytes("segment"))
        #expect(decoded.ops.map(\.hash) == [game.reveal.hash, game.mark.hash])
        var replica = Replica(circle: cast.circle)
        replica.insert(game.genesisOp)
        #expect(replica.insert(decoded).accepted.count == 2)
    }

    /// Bob's flood after his mark, pushed live with the mark; his head
    /// signature; and Alice asking for it.
    @Test func floodAndLivePushes() throws {
        let cast = try Cast()
        let game = try Game(cast)
        let f = try Self.vector("op-flood")
        let exceptions = try #require(f["exceptions"]).split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let flood = try #require(Flood(cell: Int(try f.number("cell")), chord: try f.number("chord") == 1, exceptions: exceptions))
        let floodOp = Op(
            signing: cast.bob, circle: cast.circle, gameID: game.id, seq: 3, lamport: 5, previous: game.mark.hash,
            wallClockMillis: try f.number("wall-clock"), payload: .flood(flood))
        Self.check(
            f, inputs: ["cell", "chord", "exceptions", "wall-clock"],
            outputs: try Self.opOutputs(floodOp) + [
                ("opens", flood.cells(in: game.genesis.layout).map(String.init).joined(separator: ", "))
            ])

        // Bob's side of a link to Alice, who holds his reveal and said so in her first summary.
        var alice = Replica(circle: cast.circle)
        for op in [game.genesisOp, game.reveal] { alice.insert(op) }
        var aliceSide = SyncSession()
        aliceSide.peer = cast.bob.peerID
        let aliceSummary = try #require(aliceSide.start(replica: alice).first)
        #expect(aliceSummary == .summary([game.id: VersionVector(heads: [cast.alice.peerID: 1, cast.bob.peerID: 1])], wantsReply: true))
        var bob = Replica(circle: cast.circle)
        for op in [game.genesisOp, game.reveal] { #expect(bob.insert(op).accepted.count == 1) }
        var bobSide = SyncSession()
        bobSide.liveAuthor = cast.bob.peerID
        _ = bobSide.receive(aliceSummary, replica: &bob)
        for op in [game.mark, floodOp] { #expect(bob.insert(op).accepted.count == 1) }
        let live = bobSide.push([game.mark, floodOp], replica: bob)
        let heads = bobSide.signHeads(replica: bob)
        let unsigned = SyncMessage.unsigned([ChainHead(game: game.id, author: cast.bob.peerID, seq: 3)])
        let v = try Self.vector("live-push")
        Self.check(
            v, inputs: [],
            outputs: [
                ("live", Self.hex(try #require(live.first).encoded)),
                ("heads", Self.hex(try #require(heads.first).encoded)),
                ("unsigned", Self.hex(unsigned.encoded)),
            ])
        #expect(live.count == 1 && heads.count == 1)

        // Alice's side rebuilds both ops from the document's bytes, unsigned,
        // then takes Bob's head signature: the ops are signed runs, to relay.
        let took = aliceSide.receive(try SyncMessage(decoding: v.bytes("live")), replica: &alice)
        #expect(took.outcome.accepted.map(\.hash) == [game.mark.hash, floodOp.hash] && took.violation == nil)
        #expect(alice.segments(for: game.id, after: VersionVector(heads: [cast.alice.peerID: 1, cast.bob.peerID: 1])).isEmpty)
        let signed = aliceSide.receive(try SyncMessage(decoding: v.bytes("heads")), replica: &alice)
        #expect(signed.outcome.signed.map(\.hash) == [floodOp.hash] && signed.violation == nil)
        #expect(alice.segments(for: game.id, after: VersionVector(heads: [cast.alice.peerID: 1, cast.bob.peerID: 1])).flatMap(\.ops).count == 2)
        #expect(try SyncMessage(decoding: v.bytes("unsigned")) == unsigned)
    }

    /// Alice catches Bob up over a link of protocol 15: segments in the
    /// link's compact form, then the same ops pushed on a link where
    /// nothing was said yet.
    @Test func chainsInTheLinksCompactForm() throws {
        let cast = try Cast()
        let game = try Game(cast)
        var alice = Replica(circle: cast.circle)
        for op in [game.genesisOp, game.reveal, game.mark, game.assisted] { #expect(alice.insert(op).accepted.count == 1) }
        var bob = Replica(circle: cast.circle)
        for op in [game.genesisOp, game.reveal] { #expect(bob.insert(op).accepted.count == 1) }
        var aliceSide = SyncSession(), bobSide = SyncSession()
        aliceSide.peer = cast.bob.peerID
        aliceSide.liveAuthor = cast.alice.peerID
        aliceSide.peerTakesChains = true
        bobSide.peer = cast.alice.peerID
        bobSide.liveAuthor = cast.bob.peerID
        bobSide.peerTakesChains = true
        // Each side's first summary: Alice's names both authors (Alice,
        // Bob, ascending), Bob's the game.
        let aliceSummary = aliceSide.start(replica: alice)
        let bobSummary = bobSide.start(replica: bob)
        for m in aliceSummary { _ = bobSide.receive(try SyncMessage(decoding: m.encoded), replica: &bob) }
        let answer = aliceSide.receive(try #require(bobSummary.first), replica: &alice).replies
        // On a link where neither side said anything yet.
        var quiet = SyncSession()
        quiet.liveAuthor = cast.alice.peerID
        quiet.peerTakesChains = true
        let pushed = quiet.push([game.assisted, game.mark], replica: alice)
        let v = try Self.vector("chains")
        Self.check(
            v, inputs: [],
            outputs: [
                ("catch-up", Self.hex(try #require(answer.first).encoded)),
                ("push", Self.hex(try #require(pushed.first).encoded)),
            ])
        #expect(answer.count == 1 && pushed.count == 1)

        // Bob's side rebuilds both ops from the document's bytes.
        let took = bobSide.receive(try SyncMessage(decoding: v.bytes("catch-up")), replica: &bob)
        #expect(Set(took.outcome.accepted.map(\.hash)) == [game.assisted.hash, game.mark.hash] && took.violation == nil)
        var bobAgain = Replica(circle: cast.circle)
        for op in [game.genesisOp, game.reveal] { bobAgain.insert(op) }
        var fresh = SyncSession()
        fresh.peer = cast.alice.peerID
        let again = fresh.receive(try SyncMessage(decoding: v.bytes("push")), replica: &bobAgain)
        #expect(Set(again.outcome.accepted.map(\.hash)) == [game.assisted.hash, game.mark.hash] && again.violation == nil)
    }

    @Test func presenceNotes() throws {
        let v = try Self.vector("presence")
        let cast = try Cast()
        let game = try Game(cast)
        let spot = try #require(PresenceSpot(game: game.id.bytes, x: Int(try v.number("x")), y: Int(try v.number("y"))))
        let here = PresenceNote(signing: cast.alice, serial: try v.number("here-serial"), spot: spot)
        let gone = PresenceNote(signing: cast.alice, serial: try v.number("gone-serial"), spot: nil)
        Self.check(
            v, inputs: ["x", "y", "here-serial", "gone-serial"],
            outputs: [
                ("here", Self.hex(PeerMessage.presence(here).encoded)),
                ("gone", Self.hex(PeerMessage.presence(gone).encoded)),
            ])
        for key in ["here", "gone"] {
            guard case .presence(let note) = try PeerMessage(decoding: v.bytes(key)) else {
                Issue.record("vector presence: \(key) is not a presence message")
                continue
            }
            #expect(note.isAuthentic)
        }
    }

    @Test func pointNote() throws {
        let v = try Self.vector("point")
        let cast = try Cast()
        let game = try Game(cast)
        let spot = try #require(PresenceSpot(game: game.id.bytes, x: Int(try v.number("x")), y: Int(try v.number("y"))))
        let note = PointNote(signing: cast.alice, serial: try v.number("serial"), spot: spot)
        Self.check(v, inputs: ["x", "y", "serial"], outputs: [("message", Self.hex(PeerMessage.point(note).encoded))])
        guard case .point(let decoded) = try PeerMessage(decoding: v.bytes("message")) else {
            Issue.record("vector point: not a point message")
            return
        }
        #expect(decoded.isAuthentic && decoded.spot == spot && decoded.author == cast.alice.peerID)
        // Moved to another cell, the signature no longer holds.
        var moved = try v.bytes("message")
        moved[1 + 32 + 6 + 16] ^= 1
        guard case .point(let forged) = try PeerMessage(decoding: moved) else {
            Issue.record("vector point: a moved point does not decode")
            return
        }
        #expect(forged.spot.x != spot.x && !forged.isAuthentic)
    }

    @Test func profileNote() throws {
        let v = try Self.vector("profile")
        let cast = try Cast()
        let note = ProfileNote(signing: cast.alice, serial: try v.number("serial"), name: try v.text("name"), colour: UInt8(try v.number("colour")))
        Self.check(v, inputs: ["serial", "name", "colour"], outputs: [("message", Self.hex(PeerMessage.profile(note).encoded))])
        guard case .profile(let decoded) = try PeerMessage(decoding: v.bytes("message")) else {
            Issue.record("vector profile: not a profile message")
            return
        }
        #expect(decoded.isAuthentic && decoded.name == "Alice")
    }

    @Test func playShare() throws {
        let v = try Self.vector("play")
        let cast = try Cast()
        let game = try Game(cast)
        // "start+length, start+length"
        let periods = try #require(v["periods"], "vector play lacks periods").split(separator: ",").map { item in
            let parts = item.trimmingCharacters(in: .whitespaces).split(separator: "+").compactMap { UInt64($0) }
            try #require(parts.count == 2, "vector play: a period is start+length")
            return PlayPeriod(start: parts[0], length: parts[1])
        }
        let note = try #require(
            PlayNote(
                signing: cast.alice, game: game.id.bytes, serial: try v.number("serial"), earlier: try v.number("earlier"), periods: periods))
        Self.check(v, inputs: ["serial", "earlier", "periods"], outputs: [("message", Self.hex(PeerMessage.play(note).encoded))])
        guard case .play(let decoded) = try PeerMessage(decoding: v.bytes("message")) else {
            Issue.record("vector play: not a play message")
            return
        }
        #expect(decoded.isAuthentic && decoded.total == 5_500)
    }

    @Test func everyVectorIsChecked() throws {
        let names = Set(try Self.vectors().keys)
        let checked: Set<String> = [
            "identities", "invite-code", "txt-record", "handshake", "secret-stream", "link-messages",
            "game", "op-genesis", "op-reveal", "op-mark", "op-assisted", "game-players", "op-players", "op-archive", "private-game", "op-flood", "segment",
            "sync-messages", "live-push", "presence", "profile", "play", "membership", "membership-v2", "invitation-switch", "cut-and-fork", "summary-parts",
            "game-descriptions", "op-hint", "op-seeded", "op-daily", "daily-board", "invitation", "point", "game-race", "op-resign", "chains", "addresses",
        ]
        #expect(names == checked, "vectors nothing checks: \(names.subtracting(checked)); missing: \(checked.subtracting(names))")
    }
}
