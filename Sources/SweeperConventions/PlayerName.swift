/// A player's name: what `--name` and the config file set, what the link
/// hello and the mDNS record carry, and what replies show.
public enum PlayerName {
    /// The longest name in bytes of UTF-8: the hello encodes at most this
    /// much, and the config file refuses longer names.
    public static let byteLimit = 64

    /// `text` without newlines and NULs, cut on a character boundary to at
    /// most `limit` bytes of UTF-8 (so a cut never splits a character).
    public static func cleaned(_ text: String, limit: Int = byteLimit) -> String {
        truncated(String(text.filter { !$0.isNewline && $0 != "\0" }), limit: limit)
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
