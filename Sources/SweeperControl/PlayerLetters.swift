/// The letter that marks a player beside a cell, in every viewer.
public enum PlayerLetters {
    /// One letter (upper case) for each player of `names` (peer id to
    /// name), different for each while letters last: the first letter of
    /// their name that no player before them (by name, case aside, then
    /// id) took, else a digit of their name, else the first free letter of
    /// the alphabet. Fits the one column beside a cell. Handed out by the
    /// daemon over every member of the circle, it is the same on every
    /// screen of every device that knows the same members.
    public static func assign(_ names: [String: String]) -> [String: Character] {
        var taken = Set<Character>()
        var out: [String: Character] = [:]
        let order = names.sorted { ($0.value.lowercased(), $0.key) < ($1.value.lowercased(), $1.key) }
        for (peer, name) in order {
            let ascii = name.uppercased().filter(\.isASCII)
            let candidates = ascii.filter(\.isLetter) + ascii.filter(\.isNumber) + "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
            let letter = candidates.first { !taken.contains($0) } ?? "'"
            taken.insert(letter)
            out[peer] = letter
        }
        return out
    }
}
