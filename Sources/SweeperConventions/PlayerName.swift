/// A player's name: what `--name` and the config file set, what the link
/// hello and the mDNS record carry, and what replies show.
public enum PlayerName {
    /// The longest name in bytes of UTF-8: the hello encodes at most this
    /// much, and the config file refuses longer names.
    public static let byteLimit = 64

    /// `text` as a terminal may show it: without control characters (C0,
    /// DEL and C1, so no escape sequence, newline or NUL survives) nor
    /// format characters (general category Cf: bidi embeddings, overrides
    /// and isolates U+202A–U+202E and U+2066–U+2069, the marks U+200E/F,
    /// zero-width U+200B–U+200D, U+2060, U+FEFF, soft hyphens, and so on,
    /// which reorder or hide what a name shows), cut on a character
    /// boundary to at most `limit` bytes of UTF-8 (so a cut never splits a
    /// character). Names from the network go through this before anything
    /// shows or stores them.
    public static func cleaned(_ text: String, limit: Int = byteLimit) -> String {
        truncated(String(String.UnicodeScalarView(text.unicodeScalars.filter { !isControl($0) && !isFormat($0) })), limit: limit)
    }

    /// Whether `text` holds a control character (general category Cc):
    /// what a signed name may never hold. (Format characters are dropped
    /// when a name is shown, see ``cleaned(_:limit:)``; a name signed by a
    /// release that kept them still reads.)
    public static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: isControl)
    }

    /// Whether `scalar` is a control character (general category Cc).
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// Whether `scalar` is a format character (general category Cf).
    private static func isFormat(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .format
    }

    /// What `name` looks like, to tell look-alike names apart: cleaned
    /// (``cleaned(_:limit:)``), each Cyrillic or Greek letter that looks
    /// like a Latin one taken as that letter (``lookAlikes``), then lower
    /// case. Two names with one skeleton would be taken for each other:
    /// Cyrillic "Мах" and Latin "Max" are both "max". A simple table of the
    /// common look-alikes, not Unicode's whole confusables list.
    public static func skeleton(_ name: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in cleaned(name, limit: Int.max).unicodeScalars {
            if let latin = lookAlikes[scalar] { out.append(latin) } else { out.append(scalar) }
        }
        return String(out).lowercased()
    }

    /// Whether `a` and `b` would be taken for one name: the same skeleton
    /// (case aside, look-alike letters aside, invisible characters aside).
    public static func looksLike(_ a: String, _ b: String) -> Bool {
        skeleton(a) == skeleton(b)
    }

    /// Cyrillic and Greek letters that look like a Latin letter, each to
    /// that letter (capitals to capitals: case is folded afterwards).
    public static let lookAlikes: [Unicode.Scalar: Unicode.Scalar] = {
        let pairs: [(String, String)] = [
            // Cyrillic capitals and small letters.
            ("АВЕКМНОРСТХУІЈЅԚԜҮ", "ABEKMHOPCTXYIJSQWY"),
            ("авекмнорстхуіјѕԁԛԝһү", "abekmhopctxyijsdqwhy"),
            // Greek capitals and small letters.
            ("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHIKMNOPTYX"),
            ("αβεικνορτυχγ", "abeikvoptuxy"),
        ]
        var out: [Unicode.Scalar: Unicode.Scalar] = [:]
        for (from, to) in pairs {
            for (f, t) in zip(from.unicodeScalars, to.unicodeScalars) { out[f] = t }
        }
        return out
    }()

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
