/// How many terminal columns text takes: what tables and the viewer align
/// by, so that a name with emoji or CJK characters does not push the
/// columns after it out of line.
///
/// Per grapheme cluster (what a terminal draws in one place): 2 for emoji
/// shown as pictures (emoji presentation, or an emoji followed by the
/// variation selector U+FE0F) and for East Asian wide and fullwidth
/// characters, 0 for a control character or a cluster of only combining
/// marks, else 1. The rules of `wcwidth`, by cluster, without the C
/// library's locale tables.
public enum DisplayWidth {
    /// The columns `text` takes.
    public static func of(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    /// The columns one character (grapheme cluster) takes.
    public static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.properties.generalCategory == .control || first.properties.generalCategory == .format { return 0 }
        if scalars.allSatisfy({ $0.properties.generalCategory == .nonspacingMark || $0.properties.generalCategory == .enclosingMark }) {
            return 0
        }
        if first.properties.isEmojiPresentation { return 2 }
        if first.properties.isEmoji, scalars.contains(where: { $0.value == 0xFE0F }) { return 2 }
        return isWide(first.value) ? 2 : 1
    }

    /// East Asian wide and fullwidth code points (Unicode's
    /// EastAsianWidth W and F ranges, the blocks terminals draw double).
    static func isWide(_ v: UInt32) -> Bool {
        switch v {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF,
            0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19,
            0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x2FFFD,
            0x30000...0x3FFFD:
            true
        default:
            false
        }
    }

    /// `text` followed by spaces up to `columns` columns (none when it is as wide already).
    public static func padded(_ text: String, to columns: Int) -> String {
        text + String(repeating: " ", count: max(0, columns - of(text)))
    }
}
