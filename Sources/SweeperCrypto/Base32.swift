/// Crockford's base32: digits and capital letters without I, L, O and U, so
/// that printed codes survive being read aloud and typed. Decoding ignores
/// case, hyphens and spaces, and reads I and L as 1 and O as 0.
public enum CrockfordBase32 {
    static let alphabet: [Character] = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    /// Why text is not valid base32.
    public enum DecodingError: Error, Equatable, Sendable, CustomStringConvertible {
        /// A character outside the alphabet, at a 1-based position among the symbols.
        case invalidCharacter(Character, position: Int)
        /// Bits left over in the last symbol are not zero, so the text was cut or mistyped.
        case nonZeroPadding

        public var description: String {
            switch self {
            case .invalidCharacter(let c, let p):
                "character \(p) ('\(c)') is not a base32 letter or digit"
            case .nonZeroPadding:
                "the last character does not fit: the code is cut short or mistyped"
            }
        }
    }

    /// The alphabet's symbols as ASCII, by value.
    private static let symbolBytes: [UInt8] = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

    /// Encodes `bytes` as base32 symbols, without grouping.
    public static func encode(_ bytes: [UInt8]) -> String {
        encode(bytes, groupedBy: 0)
    }

    /// Encodes `bytes` as base32 symbols in groups of `size` joined by
    /// hyphens (no grouping when `size` is 0): as ``grouped(_:size:)`` of
    /// ``encode(_:)``, written as ASCII straight into the string's storage,
    /// since peer ids are shown in every presence event.
    public static func encode(_ bytes: [UInt8], groupedBy size: Int) -> String {
        let symbols = (bytes.count * 8 + 4) / 5
        let hyphens = size > 0 && symbols > 0 ? (symbols - 1) / size : 0
        return String(unsafeUninitializedCapacity: symbols + hyphens) { out in
            var i = 0
            var written = 0
            func put(_ value: UInt32) {
                if size > 0, written > 0, written % size == 0 {
                    out[i] = UInt8(ascii: "-")
                    i += 1
                }
                out[i] = symbolBytes[Int(value & 31)]
                i += 1
                written += 1
            }
            var buffer: UInt32 = 0
            var bits = 0
            for b in bytes {
                buffer = (buffer << 8) | UInt32(b)
                bits += 8
                while bits >= 5 {
                    bits -= 5
                    put(buffer >> UInt32(bits))
                }
            }
            if bits > 0 { put(buffer << UInt32(5 - bits)) }
            return i
        }
    }

    /// The symbols of `text`: upper-cased, separators dropped, look-alikes mapped.
    static func symbols(of text: String) -> [Character] {
        var out: [Character] = []
        for c in text where c != "-" && c != " " {
            let u = Character(c.uppercased())
            switch u {
            case "I", "L": out.append("1")
            case "O": out.append("0")
            default: out.append(u)
            }
        }
        return out
    }

    /// Decodes symbols (separators already removed) into bytes.
    public static func decode(_ text: String) throws(DecodingError) -> [UInt8] {
        let symbols = symbols(of: text)
        var out: [UInt8] = []
        out.reserveCapacity(symbols.count * 5 / 8)
        var buffer: UInt32 = 0
        var bits = 0
        for (i, c) in symbols.enumerated() {
            guard let v = alphabet.firstIndex(of: c) else { throw .invalidCharacter(c, position: i + 1) }
            buffer = (buffer << 5) | UInt32(v)
            bits += 5
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((buffer >> UInt32(bits)) & 0xFF))
            }
        }
        if bits > 0 && buffer & ((1 << UInt32(bits)) - 1) != 0 { throw .nonZeroPadding }
        return out
    }

    /// Splits `text` into groups of `size` characters joined by hyphens.
    public static func grouped(_ text: String, size: Int) -> String {
        var out = ""
        for (i, c) in text.enumerated() {
            if i > 0 && i % size == 0 { out.append("-") }
            out.append(c)
        }
        return out
    }
}
