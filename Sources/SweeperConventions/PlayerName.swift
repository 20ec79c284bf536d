/// A player's name: what `--name` and the config file set, what the link
/// hello and the mDNS record carry, and what replies show.
public enum PlayerName {
    /// The longest name in bytes of UTF-8: the hello encodes at most this
    /// much, and the config file refuses longer names.
    public static let byteLimit = 64

    /// `text` as a terminal may show it: without control characters (C0,
    /// DEL and C1, so no escape sequence, newline or NUL survives), cut on a
    /// character boundary to at most `limit` bytes of UTF-8 (so a cut never
    /// splits a character). Names from the network go through this before
    /// anything shows or stores them.
    public static func cleaned(_ text: String, limit: Int = byteLimit) -> String {
        truncated(String(String.UnicodeScalarView(text.unicodeScalars.filter { !isControl($0) })), limit: limit)
    }

    /// Whether `scalar` is a control character (general category Cc).
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// `text` cut on a character boundary to at most `limit` bytes of UTF-8.
    public static func truncated(_ text: String, limit: Int = byteLimit) -> String {
        guard text.utf8.count > limit else { return text }
        var out = ""
        var bytes = 0
        for character in text {
            let size = character.utf8.count
            guard bytes + size <= limit else { break }
            out.append(character)
            bytes += size
        }
        return out
    }
}
