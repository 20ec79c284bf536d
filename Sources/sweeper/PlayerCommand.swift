import ArgumentParser
import FoundationEssentials
import SweeperControl

/// `sweeper player`: the players this computer hosts, for the people at
/// the table who play from a phone without a daemon of their own.
struct PlayerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "player", abstract: "Host a player for someone who plays from a phone: add, pair again, list, remove.",
        subcommands: [PlayerAddCommand.self, PlayerPairCommand.self, PlayerListCommand.self, PlayerRemoveCommand.self],
        defaultSubcommand: PlayerListCommand.self)

    /// How to pair a browser to a player, in words and a QR code.
    static func pairingText(_ p: PlayerPairing, added: Bool) -> String {
        var text = added ? "\(p.player.name) plays from this computer now (\(p.player.colourName), peer \(ControlFormatting.shortID(p.player.peer))).\n" : ""
        guard let code = p.code else {
            text += "The board is served on this computer only: this address logs one browser here in as \(p.player.name), once, within ten minutes:\n"
            text += "  \(p.url)\n"
            text += "To pair \(p.player.name)'s phone, run `sweeper web --lan`, then `sweeper player pair \(p.player.name)`.\n"
            return text
        }
        text += "Pair \(p.player.name)'s phone: open this address on it (or scan the code below), within five minutes:\n"
        for url in p.urls { text += "  \(url)\n" }
        if p.urls.isEmpty { text += "  (this computer has no address on a network: connect it first)\n" }
        text += "Or open https://ADDRESS:PORT/ and type the code \(code). It works once.\n"
        text += WebLauncher.qr(p.url)
        if let fingerprint = p.fingerprint {
            text +=
                "The phone warns that the certificate is not trusted: it is this computer's own. Check that it shows this SHA-256 fingerprint:\n  \(fingerprint)\n"
        }
        return text
    }
}

/// `sweeper player add NAME [--colour C]`.
struct PlayerAddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Host a new player: a key of their own kept here, admitted to the circle by this device, and a one-time code that pairs their phone.")
    @OptionGroup var options: ClientOptions
    @Argument(help: "Their name (1 to 64 bytes, no other member's).") var name: String
    @Option(
        name: [.customLong("colour"), .customLong("color")],
        help: "Their colour: auto (derived from their key), blue, green, magenta, cyan, red, yellow, light-blue or pink.")
    var colour: ColourChoice?
    func run() async throws {
        try await callDaemon(options, Commands.PlayerAdd.self, .init(name: name, colour: colour?.rawValue)) { p in
            PlayerCommand.pairingText(p, added: true)
        }
    }
}

/// `sweeper player pair NAME`.
struct PlayerPairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair", abstract: "A new one-time code (five minutes) that pairs one more browser to a hosted player.")
    @OptionGroup var options: ClientOptions
    @Argument(help: "The hosted player's name or id.") var player: String
    func run() async throws {
        try await callDaemon(options, Commands.PlayerPair.self, .init(player: player)) { p in PlayerCommand.pairingText(p, added: false) }
    }
}

/// `sweeper player list`.
struct PlayerListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the players this computer hosts, with their paired browsers and when each was last used.")
    @OptionGroup var options: ClientOptions
    func run() async throws {
        try await callDaemon(options, Commands.PlayerList.self, Empty()) { r in
            guard !r.players.isEmpty else { return "This computer hosts no player. `sweeper player add NAME` hosts one.\n" }
            var text = ""
            for p in r.players {
                text += "\(p.name)  \(p.colourName)  peer \(ControlFormatting.shortID(p.peer))  added \(WebLauncher.when(p.addedAt))"
                text += p.member ? "\n" : "  (not a member of the circle)\n"
                if p.devices.isEmpty { text += "  no browser paired (sweeper player pair \(p.name))\n" }
                for d in p.devices { text += WebLauncher.line(of: d, indent: "  ") }
            }
            return text
        }
    }
}

/// `sweeper player remove NAME`.
struct PlayerRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Stop hosting a player: their browsers are logged out at once, their key is deleted, and they leave the circle.")
    @OptionGroup var options: ClientOptions
    @Argument(help: "The hosted player's name or id.") var player: String
    @Flag(help: "Remove without asking (needed when not on a terminal).")
    var yes = false
    func run() async throws {
        try confirmRemoval(
            of: player, "Remove '\(player)'? Their browsers are logged out, their key is deleted, and they leave the circle.", yes: yes,
            json: options.json)
        try await callDaemon(options, Commands.PlayerRemove.self, .init(player: player)) { r in r.message + "\n" }
    }
}
