import SweeperCrypto
import SweeperGame
import SweeperSync

/// Why the game service refused a request: what a player asked for does not
/// fit the games held. The control router words each one for the client.
enum GameServiceError: Error, Equatable, Sendable {
    /// No game exists yet, and none was named.
    case noGames
    /// No game has an id starting with this text.
    case unknownGame(String)
    /// A game was named by empty text (which would start every id).
    case emptyGameID
    /// The text starts several games' ids (the first few given).
    case ambiguousGame(String, matches: [GameID])
    /// The cell is outside the board.
    case outsideBoard(x: Int, y: Int, width: Int, height: Int)
    /// The game is over.
    case gameOver(GameStatus)
    /// The game was made without question marks.
    case noQuestionMarks
    /// No board could be made with these parameters.
    case generationFailed(String)
    /// A game with the new game's id exists already (same board, same second).
    case gameExists
    /// The creator chose the players of this game, and this device is not one: it watches.
    case notAPlayer
    /// Only the game's creator adds players.
    case notTheCreator
    /// Every member may move in this game: it has no players to add to.
    case everyoneMayPlay
    /// A private game's key cannot be sealed to this key (not a valid identity key).
    case cannotSeal(String)
    /// Only a racer gives up, and only in a race.
    case notARacer
    /// A race's racers are chosen when it is made: none are added.
    case racersAreFixed
    /// The game is another player's board of the day: its creator alone plays it.
    case anothersDaily(creator: PeerID)
    /// The engine failed (a broken invariant, not the player's doing).
    case engine(GameEngineError)
}

/// Why the engine failed: states that the daemon's own data should never
/// be in. Each is reported as an internal error.
enum GameEngineError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The stored identity's public key does not match its secret key.
    case identityMismatch
    /// The new identity could not be read back after saving it.
    case identityNotSaved
    /// The replica refused an op this daemon made itself.
    case ownOpRefused(OpRejection)
    /// A game held a moment ago is gone.
    case gameVanished

    var description: String {
        switch self {
        case .identityMismatch: "the stored identity's public key does not match its secret key"
        case .identityNotSaved: "identity not saved"
        case .ownOpRefused(let reason): "own op refused by the replica: \(reason)"
        case .gameVanished: "the game vanished"
        }
    }
}
