import ArgumentParser
import FoundationEssentials
import SweeperControl
import SweeperGame

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The circle from the command line: invitations, joining, the members and their roles.

/// `sweeper invite`.
struct InviteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invite",
        abstract: "Print a single-use code that lets one more device join this circle; list or revoke the open ones.")
    @OptionGroup var options: ClientOptions
    @Option(help: "How long the code works: seconds, or a number with s, m, h or d (at most 30d; default 24h).")
    var valid: Lifetime?
    @Flag(help: "List the circle's invitations: open, used (by whom), expired or revoked, with the codes made here.")
    var list = false
    @Option(help: "Revoke the open invitation with this id (or a unique start of it), as --list shows it.")
    var revoke: String?

    func validate() throws {
        if [valid != nil, list, revoke != nil].filter({ $0 }).count > 1 { throw ValidationError("give one of --valid, --list and --revoke") }
    }

    func run() async throws {
        if list {
            try await callDaemon(options, Commands.Invitations.self, Empty()) { ControlFormatting.invitations($0) }
        } else if let revoke {
            try await callDaemon(options, Commands.InviteRevoke.self, .init(invitation: revoke)) { i in
                "Revoked invitation \(ControlFormatting.shortID(i.invitation)).\n"
            }
        } else {
            try await callDaemon(options, Commands.Invite.self, .init(validSeconds: valid?.seconds)) { r in
                return "\(r.code)\n(one device may join with it, until \(ControlFormatting.date(millis: r.expiresAt, near: Date())))\n"
            }
        }
    }
}

/// A lifetime on the command line: seconds, or a number with s, m, h or d.
struct Lifetime: ExpressibleByArgument {
    let seconds: Int

    init?(argument: String) {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        var text = argument.lowercased()
        var unit = 1
        if let last = text.last, let u = units[last] {
            unit = u
            text.removeLast()
        }
        guard let n = Int(text), n > 0, n <= Int.max / unit else { return nil }
        let total = n * unit
        guard Commands.Invite.validRange.contains(total) else { return nil }
        seconds = total
    }

    static var defaultCompletionKind: CompletionKind { .list(["1h", "24h", "7d"]) }
}

/// `sweeper join CODE`.
struct JoinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join", abstract: "Join the circle of an invite code: a member on this network admits this device.")
    @OptionGroup var options: ClientOptions
    @Argument(help: "The code `sweeper invite` printed.") var code: String
    @Option(help: "A member's HOST:PORT, when mDNS does not reach one (IPv6 in brackets).") var address: String?
    @Option(
        name: .customLong("old-games"),
        help: ArgumentHelp(
            "The games this device holds now: keep them (readable here, never sent to the new circle) or forget them. Asked when not given on a terminal; kept otherwise.",
            valueName: "keep|forget"))
    var oldGames: Commands.Join.OldGames?
    @Option(help: "How long to wait for the member that made the code to appear on the network, in seconds (0 to 600).")
    var timeout: Double = 15

    func validate() throws {
        guard timeout.isFinite, (0...600).contains(timeout) else { throw ValidationError("--timeout must be 0 to 600 seconds, not \(timeout)") }
    }

    func run() async throws {
        var choice = oldGames
        if choice == nil { choice = try await askAboutOldGames() }
        if address == nil {
            // A daemon with mDNS off and no peer linked finds a member only by a `connect` made meanwhile: said at once.
            let status = try? await ControlClient.withConnection(socketPath: options.socketPath) { try await $0.call(Commands.Status.self, Empty()) }
            if let status, status.mdns == "disabled", status.peerCount == 0 {
                Output.write(
                    "This daemon has mDNS off and no peer linked: give the address of the member that made the code with --address HOST:PORT\(timeout > 0 ? " (waiting \(Int(timeout)) s for one to be connected meanwhile)" : "").\n"
                        .utf8,
                    to: STDERR_FILENO)
            } else if timeout > 0, isatty(STDERR_FILENO) == 1, !options.json {
                Output.write("Looking for the member that made the code (up to \(Int(timeout)) s)…\n".utf8, to: STDERR_FILENO)
            }
        }
        try await callDaemon(options, Commands.Join.self, .init(code: code, address: address, oldGames: choice, waitSeconds: timeout)) { r in
            var out = "Joined circle \(r.circleTag)."
            if let n = r.forgottenGameCount, n > 0 { out += " Forgot the \(n) game\(n == 1 ? "" : "s") held before." }
            if let n = r.keptGameCount, n > 0 {
                out += " The \(n) game\(n == 1 ? "" : "s") held before stay\(n == 1 ? "s" : "") here, never sent to the new circle."
            }
            return out + "\n"
        }
    }

    /// On a terminal, when the daemon holds games, asks whether to keep
    /// or forget them; `nil` (kept) otherwise.
    private func askAboutOldGames() async throws -> Commands.Join.OldGames? {
        guard isatty(STDIN_FILENO) == 1, !options.json else { return nil }
        let status = try? await ControlClient.withConnection(socketPath: options.socketPath) { try await $0.call(Commands.Status.self, Empty()) }
        guard let held = status?.gameCount, held > 0 else { return nil }
        for _ in 0..<3 {
            Output.write(
                "This device holds \(held) game\(held == 1 ? "" : "s"). Keep them (readable here, never sent to the new circle) or forget them? [K/f] ".utf8,
                to: STDERR_FILENO)
            guard let line = readLine() else { return nil }
            switch line.trimmedOfWhitespace.lowercased() {
            case "", "k", "keep": return .keep
            case "f", "forget": return .forget
            default: Output.write("Answer k (keep) or f (forget).\n".utf8, to: STDERR_FILENO)
            }
        }
        throw ValidationError("no answer: give --old-games keep or --old-games forget")
    }
}

extension Commands.Join.OldGames: ExpressibleByArgument {}

struct CircleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "circle", abstract: "List the circle's devices, name an admin, turn a member's invitations off or on, or remove a device.",
        subcommands: [CircleListCommand.self, CircleAdminCommand.self, CircleInvitesCommand.self, CircleRemoveCommand.self],
        defaultSubcommand: CircleListCommand.self)
}

struct CircleListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the circle's devices: each one's role, who invited and admitted it, when, and when last seen; and those removed.")
    @OptionGroup var options: ClientOptions
    func run() async throws {
        try await callDaemon(options, Commands.Circle.self, .init(), text: { ControlFormatting.circle($0) })
    }
}

struct CircleAdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "Name a member an admin: admins remove devices less senior than they are and name admins. The founder and admins may.")
    @OptionGroup var options: ClientOptions
    @Argument(help: "The device: its player name, or its peer id or a unique start of it (see sweeper circle).")
    var device: String
    func run() async throws {
        try await callDaemon(options, Commands.CircleAdmin.self, .init(device: device)) { r in
            "\(ControlFormatting.device(name: r.name, peerID: r.peer)) is an admin now.\n"
        }
    }
}

/// `on` or `off`.
enum Switch: String, ExpressibleByArgument, CaseIterable {
    case on, off
}

struct CircleInvitesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invites",
        abstract:
            "Turn a member's invitations off (its codes, old and new, admit nobody) or on again. The founder and admins may, for members less senior than they are."
    )
    @OptionGroup var options: ClientOptions
    @Argument(help: "The member: its player name, or its peer id or a unique start of it (see sweeper circle).")
    var device: String
    @Argument(help: "on or off.")
    var state: Switch
    func run() async throws {
        try await callDaemon(options, Commands.CircleInvitations.self, .init(device: device, allowed: state == .on)) { r in
            "\(ControlFormatting.device(name: r.name, peerID: r.peer)) \(r.allowed ? "may invite again" : "may not invite now; its open codes admit nobody").\n"
        }
    }
}

struct CircleRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract:
            "Remove a device from the circle: it can no longer link, its later moves are refused, and the circle gets a new key. The founder and admins may, for devices less senior than they are."
    )
    @OptionGroup var options: ClientOptions
    @Argument(help: "The device: its player name, or its peer id or a unique start of it (see sweeper circle).")
    var device: String
    @Flag(help: "Remove without asking (needed when not on a terminal).")
    var yes = false
    func run() async throws {
        if !yes {
            // Whether this device may, before anyone is asked (or told to add --yes).
            let would = try await askDaemon(options, Commands.CircleRemove.self, .init(device: device, check: true))
            let hosted = would.hostedRemovedNames.map { " The players it hosts go with it: \($0.joined(separator: ", "))." } ?? ""
            try confirmRemoval(
                of: device,
                "Remove \(ControlFormatting.device(name: would.name, peerID: would.peer)) from the circle? It can no longer link, its later moves are refused, and the circle gets a new key.\(hosted)",
                yes: yes, json: options.json)
        }
        try await callDaemon(options, Commands.CircleRemove.self, .init(device: device)) { r in
            let hosted = r.hostedRemovedNames.map { " The players it hosted are removed with it: \($0.joined(separator: ", "))." } ?? ""
            return
                "Removed \(ControlFormatting.device(name: r.name, peerID: r.peer)); \(r.keptOps) of its moves stay.\(hosted) The circle's new tag is \(r.circleTag).\n"
        }
    }
}

/// Asks on the terminal before a removal that cannot be undone (`question`,
/// then y/N); without a terminal, or with `--json`, only `--yes` goes on.
func confirmRemoval(of what: String, _ question: String, yes: Bool, json: Bool) throws {
    guard !yes else { return }
    guard isatty(STDIN_FILENO) == 1, !json else {
        throw ValidationError("removing cannot be undone: add --yes to remove '\(what)' without asking")
    }
    try askYes(question, or: "Nothing removed.")
}

/// Asks `question` on the terminal (y/N); anything but yes says `refused`
/// and exits 1.
func askYes(_ question: String, or refused: String) throws {
    Output.write((question + " [y/N] ").utf8, to: STDERR_FILENO)
    guard let line = readLine(), ["y", "yes"].contains(line.trimmedOfWhitespace.lowercased()) else {
        Output.write((refused + "\n").utf8, to: STDERR_FILENO)
        throw ExitCode(1)
    }
}
