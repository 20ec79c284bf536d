import SweeperControl

/// How the viewer tells players apart: each has a letter and a colour of
/// its own, the same on every screen.
extension ViewerRenderer {
    /// How the viewer marks another player: a letter of their own and a colour.
    struct PlayerMark: Equatable {
        /// Upper case for their cursor, lower case for their last move.
        var letter: Character
        /// Their colour.
        var colour: PlayerColour
    }

    /// The mark of every other player the viewer shows: those looking at
    /// the game and those whose last move is marked.
    static func playerMarks(_ viewer: Viewer) -> [String: PlayerMark] {
        var names: [String: String] = [:]
        for p in viewer.watching { names[p.peer] = p.name }
        for peer in viewer.lastActed.keys where names[peer] == nil { names[peer] = viewer.name(of: peer) }
        for point in viewer.points.values where names[point.peer] == nil { names[point.peer] = point.name }
        var chosen: [String: Int] = [:]
        for p in viewer.game?.players ?? [] { if let c = p.colour { chosen[p.peer] = c } }
        for p in viewer.watching { if let c = p.colour { chosen[p.peer] = c } }
        for point in viewer.points.values { if let c = point.colour { chosen[point.peer] = c } }
        let colours = Self.playerColours(Array(names.keys), chosen: chosen)
        // Each player's letter as the daemon hands it out over the whole
        // circle (the same on every screen), else as this screen would.
        var letters = PlayerLetters.assign(names)
        for p in viewer.game?.players ?? [] { if let l = p.letter?.first, names[p.peer] != nil { letters[p.peer] = l } }
        for (peer, p) in viewer.presence where names[peer] != nil { if let l = p.letter?.first { letters[peer] = l } }
        var marks: [String: PlayerMark] = [:]
        for (peer, letter) in letters { if let colour = colours[peer] { marks[peer] = PlayerMark(letter: letter, colour: colour) } }
        return marks
    }

    /// A player's colour: a background that reads on dark and light
    /// terminals, with a foreground that reads on it.
    public struct PlayerColour: Equatable, Sendable {
        /// The background.
        public var background: Color
        /// The text on it.
        public var foreground: Color
    }

    /// The eight player colours, in the order they are handed out.
    public static let playerPalette: [PlayerColour] = [
        PlayerColour(background: .blue, foreground: .brightWhite),
        PlayerColour(background: .green, foreground: .black),
        PlayerColour(background: .magenta, foreground: .brightWhite),
        PlayerColour(background: .cyan, foreground: .black),
        PlayerColour(background: .red, foreground: .brightWhite),
        PlayerColour(background: .yellow, foreground: .black),
        PlayerColour(background: .brightBlue, foreground: .black),
        PlayerColour(background: .brightMagenta, foreground: .black),
    ]

    /// A colour for each player (by peer id), derived from the id, so each
    /// player keeps theirs from one screen to the next; up to eight players
    /// get eight different colours (a taken colour passes to the next free one,
    /// in the order of the ids).
    public static func playerColours(_ peers: [String], chosen: [String: Int] = [:]) -> [String: PlayerColour] {
        var taken = Set<Int>()
        var out: [String: PlayerColour] = [:]
        // A colour a player chose in their profile is theirs.
        for peer in Set(peers).sorted() {
            guard let c = chosen[peer], (1...playerPalette.count).contains(c) else { continue }
            taken.insert(c - 1)
            out[peer] = playerPalette[c - 1]
        }
        for peer in Set(peers).sorted() where out[peer] == nil {
            // FNV-1a of the printed id: the same on every machine and run.
            var hash: UInt32 = 2_166_136_261
            for b in peer.utf8 { hash = (hash ^ UInt32(b)) &* 16_777_619 }
            var index = Int(hash % UInt32(playerPalette.count))
            if taken.count < playerPalette.count {
                while taken.contains(index) { index = (index + 1) % playerPalette.count }
            }
            taken.insert(index)
            out[peer] = playerPalette[index]
        }
        return out
    }
}
