import SweeperControl

/// Names as the viewer shows them, kept up to date as players rename.
extension Viewer {
    /// A player renamed themselves (or chose a colour): every place this
    /// viewer shows them says the new name, and the daemon's `letter` for
    /// it, at once.
    mutating func rename(_ peer: String, to name: String, colour: Int?, letter: String? = nil) {
        if peer == selfID { selfName = name }
        if var view = game {
            for i in view.players.indices where view.players[i].peer == peer {
                view.players[i].name = name
                view.players[i].colour = colour
                if let letter { view.players[i].letter = letter }
            }
            if var race = view.race {
                for i in race.racers.indices where race.racers[i].peer == peer { race.racers[i].name = name }
                view.race = race
            }
            game = view
        }
        if var p = presence[peer] {
            p.name = name
            p.colour = colour
            if let letter { p.letter = letter }
            presence[peer] = p
        }
        for i in peers.indices where peers[i].peer == peer { peers[i].name = name }
    }
}
