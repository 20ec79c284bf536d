import SweeperConventions
import SweeperCrypto

/// A player's public profile, the same on every daemon of the circle: their
/// name and colour, signed by their daemon, replicated to every member
/// (relays included) and kept; the newest (by serial) of each author wins.
///
/// Encoding (the body of a ``PeerMessage/profile(_:)``):
///
///     author key (32) ‖ serial (LEB128) ‖ name length (1 byte, ≤ 64) ‖ name (UTF-8)
///     ‖ colour (1 byte: 0 derived from the peer id, 1–8 a palette colour)
///     ‖ signature (64): Ed25519 over "sweeper/profile/v1\0" ‖ the bytes before it
public struct ProfileNote: Sendable, Hashable {
    static let signatureDomain = Array("sweeper/profile/v1\0".utf8)
    /// The largest colour number (the palette's size).
    public static let colourLimit: UInt8 = 8

    /// Whose profile this is.
    public let author: PeerID
    /// Grows with every profile the author makes (its milliseconds since 1970 then, made to grow).
    public let serial: UInt64
    /// The player's name (at most 64 bytes, cut on a character boundary, no control characters).
    public let name: String
    /// 0: the colour derived from the peer id; 1–8: a colour of the palette.
    public let colour: UInt8
    /// The author's signature.
    public let signature: Signature

    static func signedBytes(author: PeerID, serial: UInt64, name: String, colour: UInt8) -> [UInt8] {
        var out = ByteWriter()
        out.append(author.bytes)
        out.varint(serial)
        let nameBytes = Array(name.utf8)
        out.byte(UInt8(clamping: nameBytes.count))
        out.append(nameBytes)
        out.byte(colour)
        return out.bytes
    }

    /// A profile signed by `identity`; the name is cleaned and cut to 64 bytes, the colour clamped.
    public init(signing identity: SigningIdentity, serial: UInt64, name: String, colour: UInt8) {
        author = identity.peerID
        self.serial = serial
        self.name = PlayerName.cleaned(name)
        self.colour = min(colour, Self.colourLimit)
        signature = identity.sign(
            Self.signatureDomain + Self.signedBytes(author: author, serial: serial, name: self.name, colour: self.colour))
    }

    /// Whether the signature is the author's.
    public var isAuthentic: Bool {
        author.isValidSignature(signature, of: Self.signatureDomain + Self.signedBytes(author: author, serial: serial, name: name, colour: colour))
    }

    /// The encoding.
    public var encoded: [UInt8] {
        Self.signedBytes(author: author, serial: serial, name: name, colour: colour) + signature.bytes
    }

    /// Decodes a profile (its signature is not checked here: ``isAuthentic``).
    /// A name that is not UTF-8, too long, or holds control characters is refused.
    public init(decoding bytes: some Collection<UInt8>) throws(ByteDecodingError) {
        var r = ByteReader(Array(bytes))
        let author = try r.peer("profile author")
        let serial = try r.varint("profile serial")
        let length = Int(try r.byte("profile name length"))
        guard length <= PlayerName.byteLimit else { throw .tooLarge(field: "profile name", limit: PlayerName.byteLimit) }
        guard let name = String(validating: try r.take(length, "profile name"), as: UTF8.self) else { throw .invalidText(field: "profile name") }
        guard !PlayerName.hasControlCharacters(name) else { throw .invalid(field: "profile name", reason: "has control characters") }
        let colour = try r.byte("profile colour")
        guard colour <= Self.colourLimit else { throw .valueOutOfRange(field: "profile colour", value: UInt64(colour)) }
        let signature = try r.signatureAtEnd("profile signature")
        self.author = author
        self.serial = serial
        self.name = name
        self.colour = colour
        self.signature = signature
    }
}
