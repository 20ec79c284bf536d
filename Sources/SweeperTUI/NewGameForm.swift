import SweeperControl
import SweeperConventions

/// The form `n` opens: a preset, one like the open game, or a custom size;
/// whether the board must be solvable without guessing; and, as `new`
/// takes them, who plays, whether only they read it, and whether they race.
public struct NewGameForm: Equatable, Sendable {
    /// One row of the form.
    public enum Choice: Equatable, Sendable {
        /// The size of the game open now.
        case like(width: Int, height: Int, mines: Int)
        /// A preset.
        case preset(String, width: Int, height: Int, mines: Int)
        /// The sizes typed in.
        case custom
    }

    /// The rows, in order.
    public var choices: [Choice]
    /// The row selected.
    public var selected = 0
    /// The custom width, height and mines as typed.
    public var custom = ["", "", ""]
    /// Which custom field digits go to (0 width, 1 height, 2 mines).
    public var field = 0
    /// Whether the board must be solvable without guessing.
    public var noGuess = false
    /// Whether the players race, each on a board of their own (`r` toggles).
    public var race = false
    /// Whether only the players read the game (`p` toggles; it needs players).
    public var privateGame = false
    /// The players, names separated by commas, as typed (`a` types them);
    /// empty: every member (in a race, those here).
    public var players = ""
    /// Whether keys type into the players.
    public var typingPlayers = false

    /// A form offering `game`'s size first, when there is a game, with the
    /// choice last made on this device (`last`) selected.
    public init(like game: GameView?, last: Commands.New.Arguments? = nil) {
        var choices: [Choice] = []
        if let game { choices.append(.like(width: game.width, height: game.height, mines: game.mines)) }
        choices += [
            .preset("beginner", width: 9, height: 9, mines: 10), .preset("intermediate", width: 16, height: 16, mines: 40),
            .preset("expert", width: 30, height: 16, mines: 99), .custom,
        ]
        self.choices = choices
        if let game { custom = [String(game.width), String(game.height), String(game.mines)] }
        guard let last else { return }
        noGuess = last.noGuess ?? false
        if let preset = last.preset?.lowercased(),
            let row = choices.firstIndex(where: { if case .preset(preset, _, _, _) = $0 { true } else { false } })
        {
            selected = row
        } else if let w = last.width, let h = last.height, let m = last.mines {
            if case .like(w, h, m)? = choices.first {
                selected = 0
            } else {
                custom = [String(w), String(h), String(m)]
                selected = choices.count - 1
            }
        }
    }

    /// The request for the selected row; nil while a custom size is incomplete.
    public var arguments: Commands.New.Arguments? {
        var out: Commands.New.Arguments
        switch choices[selected] {
        case let .like(w, h, m): out = Commands.New.Arguments(width: w, height: h, mines: m, noGuess: noGuess)
        case let .preset(name, _, _, _): out = Commands.New.Arguments(preset: name, noGuess: noGuess)
        case .custom:
            guard let w = Int(custom[0]), let h = Int(custom[1]), let m = Int(custom[2]) else { return nil }
            out = Commands.New.Arguments(width: w, height: h, mines: m, noGuess: noGuess)
        }
        let named = playerNames
        out.players = named.isEmpty ? nil : named
        out.privateGame = privateGame ? true : nil
        out.race = race ? true : nil
        return out
    }

    /// The players typed, each name trimmed.
    var playerNames: [String] {
        players.split(separator: ",").map { String($0).trimmedOfWhitespace }.filter { !$0.isEmpty }
    }

    /// The form's lines, the selected row marked.
    public var lines: [String] {
        var out = choices.enumerated().map { i, choice -> String in
            let mark = i == selected ? "> " : "  "
            switch choice {
            case let .like(w, h, m): return mark + "like this one  " + ControlFormatting.size(width: w, height: h, mines: m)
            case let .preset(name, w, h, m): return mark + DisplayWidth.padded(name, to: 14) + ControlFormatting.size(width: w, height: h, mines: m)
            case .custom:
                let shown = custom.enumerated().map { j, text in
                    let value = text.isEmpty ? "_" : text
                    return i == selected && j == field ? "[\(value)]" : " \(value) "
                }
                return mark + "custom        width\(shown[0]) height\(shown[1]) mines\(shown[2])"
            }
        }
        let who = typingPlayers ? "[\(players)_]" : playerNames.isEmpty ? (race ? "those here" : "everyone") : playerNames.joined(separator: ", ")
        out += [
            "", "no-guess: \(noGuess ? "on" : "off")   (g toggles)",
            "race: \(race ? "on" : "off")   (r toggles)     private: \(privateGame ? "on" : "off")   (p toggles, needs players)",
            "players: \(who)   (a types names, commas between, enter ends)",
            "enter starts, esc cancels; on custom type digits, tab moves",
        ]
        return out
    }

    /// Handles a key; returns the request when the form is done.
    mutating func handle(_ key: Key) -> (done: Bool, start: Commands.New.Arguments?) {
        if typingPlayers {
            // Every key types into the players until enter, tab or esc.
            switch key {
            case .enter, .tab, .escape: typingPlayers = false
            case .backspace: if !players.isEmpty { players.removeLast() }
            case .character(let c) where !c.isNewline && players.count < 200: players.append(c)
            default: break
            }
            return (false, nil)
        }
        switch key {
        case .character("r"): race.toggle()
        case .character("p"): privateGame.toggle()
        case .character("a"): typingPlayers = true
        case .up, .character("k"): selected = max(0, selected - 1)
        case .down, .character("j"): selected = min(choices.count - 1, selected + 1)
        case .character("g"): noGuess.toggle()
        case .tab, .right:
            if choices[selected] == .custom { field = (field + 1) % 3 }
        case .left:
            if choices[selected] == .custom { field = (field + 2) % 3 }
        case .backspace:
            if choices[selected] == .custom, !custom[field].isEmpty { custom[field].removeLast() }
        case .character(let c) where c.isASCII && c.isNumber:
            if choices[selected] == .custom, custom[field].count < 6 { custom[field].append(c) }
        case .enter, .character(" "):
            return (arguments != nil, arguments)
        case .escape, .character("q"):
            return (true, nil)
        default: break
        }
        return (false, nil)
    }
}
