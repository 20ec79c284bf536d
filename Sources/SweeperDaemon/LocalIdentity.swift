import Foundation
import SweeperStore

/// This daemon's identity and circle as the engine uses them.
///
/// Provisional: random bytes until SweeperCrypto's Ed25519 identity and
/// CircleKey are wired in; the store already keeps the secret key.
struct LocalIdentity: Sendable {
    var author: LocalAuthor
    var circleKey: Data

    /// Loads the identity and circle from the store, making them on first start.
    static func loadOrCreate(_ store: Store) throws -> LocalIdentity {
        let identity: StoredIdentity
        if let existing = try store.identity() {
            identity = existing
        } else {
            let secret = Data((0..<64).map { _ in UInt8.random(in: 0...255) })
            let made = StoredIdentity(secretKey: secret, publicKey: secret.suffix(32))
            try store.saveIdentity(made)
            identity = try store.identity() ?? made
        }
        let circle: Data
        if let key = try store.circleKey() {
            circle = key
        } else {
            circle = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
            try store.setCircleKey(circle)
        }
        let peerID = identity.publicKey.map { String(format: "%02x", $0) }.joined()
        return LocalIdentity(author: LocalAuthor(key: identity.publicKey, peerID: peerID), circleKey: circle)
    }

    /// A short tag derived from the circle key (FNV-1a; not the key).
    var circleTag: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in Data("sweeper-circle-tag".utf8) + circleKey {
            hash ^= UInt64(b)
            hash = hash &* 0x100_0000_01b3
        }
        return String(format: "%016llx", hash).prefix(8).uppercased()
    }

    /// The invite code carrying the circle key, with a checksum.
    var inviteCode: String {
        "SWEEPER-" + circleKey.map { String(format: "%02X", $0) }.joined()
    }

    /// Reads an invite code; a mistyped one is refused, naming the fault.
    static func circleKey(fromInvite code: String) throws -> Data {
        let text = code.trimmingCharacters(in: .whitespaces).uppercased()
        guard text.hasPrefix("SWEEPER-") else {
            throw InviteError(message: "an invite code starts with SWEEPER-")
        }
        let hex = Array(text.dropFirst(8).filter { $0 != "-" })
        guard hex.count == 64 else { throw InviteError(message: "an invite code has 64 hex digits after SWEEPER-, this one has \(hex.count)") }
        var bytes = Data()
        for i in stride(from: 0, to: 64, by: 2) {
            guard let b = UInt8(String(hex[i...i + 1]), radix: 16) else { throw InviteError(message: "'\(String(hex[i...i + 1]))' is not hex") }
            bytes.append(b)
        }
        return bytes
    }
}

/// A refused invite code.
struct InviteError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
