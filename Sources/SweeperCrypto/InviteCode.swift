/// The code `sweeper invite` prints and `sweeper join` reads: the circle key
/// with a checksum, as `SWEEPER-` and grouped Crockford base32.
///
/// Layout: version byte (1) ‖ circle key (32) ‖ first 4 bytes of BLAKE2b
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
            case .unsupportedVersion(let v): "this invite code is version \(v); this Sweeper reads version \(InviteCode.version)"
            case .checksumMismatch: "the invite code's checksum does not match: a character is mistyped"
            }
        }
    }

    /// The invite code for `circle`.
    public static func encode(_ circle: CircleKey) -> String {
        let key = circle.bytes
        let body = [version] + key + check(version: version, key: key)
        return prefix + "-" + CrockfordBase32.grouped(CrockfordBase32.encode(body), size: 5)
    }

    /// Reads an invite code (case, spaces and hyphens don't matter).
    public static func decode(_ text: String) throws(DecodingError) -> CircleKey {
        let trimmed = text.trimmingWhitespace()
        guard trimmed.uppercased().hasPrefix(prefix) else { throw .missingPrefix }
        let rest = String(trimmed.dropFirst(prefix.count))
        let symbols = CrockfordBase32.symbols(of: rest)
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
        let key = Array(bytes.dropFirst().prefix(CircleKey.byteCount))
        let sum = Array(bytes.dropFirst(1 + CircleKey.byteCount))
        guard sum == check(version: v, key: key) else { throw .checksumMismatch }
        guard v == version else { throw .unsupportedVersion(v) }
        do {
            return try CircleKey(bytes: key)
        } catch {
            throw .wrongLength(expected: symbolCount, actual: symbols.count)
        }
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
