/// The codes `sweeper invite` prints and `sweeper join` reads, as
/// `SWEEPER-` and grouped Crockford base32 with a checksum: this release's
/// single-use invitations (version 2, ``encode(_:)-(InvitationSecret)``),
/// and the circle keys of earlier releases (version 1).
///
/// Version 1: version byte (1) ‖ circle key (32) ‖ first 4 bytes of BLAKE2b
/// over a domain string, the version and the key; 37 bytes, 60 symbols.
public enum InviteCode {
    /// The prefix every code starts with.
    public static let prefix = "SWEEPER"
    static let version: UInt8 = 1
    static let checkByteCount = 4
    static let symbolCount = ((1 + CircleKey.byteCount + checkByteCount) * 8 + 4) / 5

    /// Why an invite code was refused.
    public enum DecodingError: Error, Equatable, Sendable, CustomStringConvertible {
        /// The text does not start with `SWEEPER-`.
        case missingPrefix
        /// A character is not a base32 letter or digit.
        case invalidCharacter(Character, position: Int)
        /// Too few or too many characters.
        case wrongLength(expected: Int, actual: Int)
        /// A code from a newer (or unknown) version of Sweeper.
        case unsupportedVersion(UInt8)
        /// The checksum does not match: a character is mistyped.
        case checksumMismatch

        public var description: String {
            switch self {
            case .missingPrefix: "an invite code starts with \(InviteCode.prefix)-"
            case .invalidCharacter(let c, let p): "invite code character \(p) ('\(c)') is not a base32 letter or digit"
            case .wrongLength(let e, let a): "an invite code has \(e) characters after the prefix (hyphens aside); this one has \(a)"
            case .unsupportedVersion(let v): "this invite code is version \(v); this Sweeper reads versions 1 to 3"
            case .checksumMismatch: "the invite code's checksum does not match: a character is mistyped"
            }
        }
    }

    /// The invite code for `circle`.
    public static func encode(_ circle: CircleKey) -> String {
        let key = circle.bytes
        let body = [version] + key + check(version: version, key: key)
        return prefix + "-" + CrockfordBase32.encode(body, groupedBy: 5)
    }

    /// Reads an invite code of an earlier release (case, spaces and hyphens don't matter).
    public static func decode(_ text: String) throws(DecodingError) -> CircleKey {
        try circleKey(try symbols(of: text))
    }

    private static func circleKey(_ symbols: [Character]) throws(DecodingError) -> CircleKey {
        let (v, key) = try parse(symbols, payload: CircleKey.byteCount, symbolCount: symbolCount)
        guard v == version else { throw .unsupportedVersion(v) }
        do {
            return try CircleKey(bytes: key)
        } catch {
            throw .wrongLength(expected: symbolCount, actual: symbolCount)
        }
    }

    /// A code's symbols after its prefix (case, spaces and hyphens aside).
    static func symbols(of text: String) throws(DecodingError) -> [Character] {
        let trimmed = text.trimmingWhitespace()
        guard trimmed.uppercased().hasPrefix(prefix) else { throw .missingPrefix }
        return CrockfordBase32.symbols(of: String(trimmed.dropFirst(prefix.count)))
    }

    /// The version and payload of a code of `symbolCount` symbols whose
    /// payload has `payload` bytes, its checksum checked.
    static func parse(_ symbols: [Character], payload: Int, symbolCount: Int) throws(DecodingError) -> (version: UInt8, payload: [UInt8]) {
        guard symbols.count == symbolCount else { throw .wrongLength(expected: symbolCount, actual: symbols.count) }
        let bytes: [UInt8]
        do {
            bytes = try CrockfordBase32.decode(String(symbols))
        } catch {
            switch error {
            case .invalidCharacter(let c, let p): throw .invalidCharacter(c, position: p)
            case .nonZeroPadding: throw .checksumMismatch
            }
        }
        guard let v = bytes.first else { throw .wrongLength(expected: symbolCount, actual: 0) }
        let body = Array(bytes.dropFirst().prefix(payload))
        guard Array(bytes.dropFirst(1 + payload)) == check(version: v, key: body) else { throw .checksumMismatch }
        return (v, body)
    }

    static func check(version: UInt8, key: [UInt8]) -> [UInt8] {
        Array(Blake2b.hash(Array("sweeper/invite/v1".utf8), [version], key, length: 16).prefix(checkByteCount))
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s = s.dropFirst() }
        while let l = s.last, l.isWhitespace { s = s.dropLast() }
        return String(s)
    }
}

/// The secret of a single-use invitation: 16 random bytes, which the
/// invite code carries instead of the circle key. From it come the
/// invitation's Ed25519 key pair (its public key is the invitation's id in
/// the circle's records) and the key the joining device's handshake proves.
public struct InvitationSecret: Sendable, Equatable {
    /// The length in bytes.
    public static let byteCount = 16
    /// The secret, in wiped memory.
    public let secret: SecretBytes

    /// A fresh random secret.
    public init() { secret = SecretBytes(randomCount: Self.byteCount) }

    /// A secret from its bytes (exactly 16), as a code carries them.
    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        secret = SecretBytes(copying: bytes)
    }

    /// The invitation's signing key: an Ed25519 key pair from the seed
    /// `BLAKE2b-32("sweeper/invitation-key/v1" ‖ secret)`.
    public var identity: SigningIdentity {
        let seed = Blake2b.hash(Array("sweeper/invitation-key/v1".utf8), secret.bytes, length: 32)
        // A 32-byte seed is always accepted.
        return (try? SigningIdentity(seed: seed)) ?? SigningIdentity()
    }

    /// The key a joining device's handshake proves for the invitation whose
    /// public key is `invitation`: `BLAKE2b-32("sweeper/invitation-handshake/v1" ‖ key)`.
    /// Members derive it from the invitation record, the joining device from
    /// the code; nobody else knows the invitation's key.
    public static func handshakeKey(for invitation: PeerID) -> CircleKey {
        let bytes = Blake2b.hash(Array("sweeper/invitation-handshake/v1".utf8), invitation.bytes, length: 32)
        return (try? CircleKey(bytes: bytes)) ?? CircleKey()
    }

    /// The bytes the joining device signs with the invitation's key to show
    /// it holds the secret: `"sweeper/admission/v1\0" ‖ joining key ‖ member key`.
    public static func admissionMessage(joining: PeerID, member: PeerID) -> [UInt8] {
        Array("sweeper/admission/v1\0".utf8) + joining.bytes + member.bytes
    }

    public static func == (a: InvitationSecret, b: InvitationSecret) -> Bool { a.secret == b.secret }
}

/// What an invite code holds.
public enum Invite: Sendable, Equatable {
    /// A single-use invitation whose code also names the circle's root
    /// (``InviteCode/rootByteCount`` bytes of it): the joining device takes
    /// only records rooted there (this release's codes, version 3).
    case pinned(InvitationSecret, root: [UInt8])
    /// A single-use invitation (the codes of the release before, version 2).
    case invitation(InvitationSecret)
    /// A circle key itself (the codes of releases before invitations).
    case circleKey(CircleKey)

    /// The invitation's secret, for either kind of invitation.
    public var secret: InvitationSecret? {
        switch self {
        case .pinned(let secret, _), .invitation(let secret): secret
        case .circleKey: nil
        }
    }
}

extension InviteCode {
    static let invitationVersion: UInt8 = 2
    static let invitationSymbolCount = ((1 + InvitationSecret.byteCount + checkByteCount) * 8 + 4) / 5

    /// The code of a single-use invitation: version (1, = 2) ‖ secret (16)
    /// ‖ first 4 bytes of BLAKE2b-16("sweeper/invite/v1" ‖ version ‖
    /// secret); 21 bytes, 34 symbols.
    public static func encode(_ invitation: InvitationSecret) -> String {
        let secret = invitation.secret.bytes
        let body = [invitationVersion] + secret + check(version: invitationVersion, key: secret)
        return prefix + "-" + CrockfordBase32.encode(body, groupedBy: 5)
    }

    static let pinnedVersion: UInt8 = 3
    /// How many bytes of the circle's root a code of version 3 carries.
    public static let rootByteCount = 10
    static let pinnedSymbolCount = ((1 + InvitationSecret.byteCount + rootByteCount + checkByteCount) * 8 + 4) / 5

    /// The code of a single-use invitation to the circle whose root is
    /// `root` (its first ``rootByteCount`` bytes are kept): version (1,
    /// = 3) ‖ secret (16) ‖ root (10) ‖ first 4 bytes of
    /// BLAKE2b-16("sweeper/invite/v1" ‖ version ‖ secret ‖ root); 31
    /// bytes, 50 symbols.
    public static func encode(_ invitation: InvitationSecret, root: [UInt8]) -> String {
        let payload =
            invitation.secret.bytes + Array(root.prefix(rootByteCount))
            + [UInt8](repeating: 0, count: max(0, rootByteCount - root.count))
        let body = [pinnedVersion] + payload + check(version: pinnedVersion, key: payload)
        return prefix + "-" + CrockfordBase32.encode(body, groupedBy: 5)
    }

    /// Reads a code of any kind: an invitation naming its circle's root (50
    /// symbols), one of the release before (34) or, from an earlier
    /// release, a circle key (60 symbols).
    public static func read(_ text: String) throws(DecodingError) -> Invite {
        let symbols = try symbols(of: text)
        if symbols.count == symbolCount { return .circleKey(try circleKey(symbols)) }
        if symbols.count == pinnedSymbolCount {
            let (v, payload) = try parse(symbols, payload: InvitationSecret.byteCount + rootByteCount, symbolCount: pinnedSymbolCount)
            guard v == pinnedVersion, let invitation = InvitationSecret(bytes: Array(payload.prefix(InvitationSecret.byteCount))) else {
                throw .unsupportedVersion(v)
            }
            return .pinned(invitation, root: Array(payload.suffix(rootByteCount)))
        }
        let (v, secret) = try parse(symbols, payload: InvitationSecret.byteCount, symbolCount: invitationSymbolCount)
        guard v == invitationVersion, let invitation = InvitationSecret(bytes: secret) else { throw .unsupportedVersion(v) }
        return .invitation(invitation)
    }
}
