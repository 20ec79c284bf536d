// Trimming and comparing text without Foundation's character sets and ICU,
// so that no module the shipped program links needs more than
// FoundationEssentials.

extension StringProtocol {
    /// The text without the spaces, tabs and line breaks at either end.
    public var trimmedOfWhitespace: String {
        let isSpace: (Character) -> Bool = { $0.isWhitespace || $0.isNewline }
        guard let first = firstIndex(where: { !isSpace($0) }),
            let last = lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(self[first...last])
    }

    /// Whether the two are the same text once both are lowercased (by the
    /// Unicode lowercase mapping): how names are matched, case aside.
    public func equalsIgnoringCase(_ other: some StringProtocol) -> Bool {
        lowercased() == other.lowercased()
    }
}
