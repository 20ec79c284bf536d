import ArgumentParser
import FoundationEssentials
import SweeperControl
import SweeperConventions
import SweeperQR
import SweeperTUI

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `sweeper web`: the board in a browser, on this computer or a phone.
struct WebCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web", abstract: "Play in a browser: on this computer, or on phones on the home network (paired).",
        subcommands: [WebOpenCommand.self, WebPairCommand.self, WebDevicesCommand.self, WebRevokeCommand.self],
        defaultSubcommand: WebOpenCommand.self)
}

/// `sweeper web [open]`: the web board's address, logged in for one browser;
/// with `--lan` or `--no-lan`, the home network turned on or off.
struct WebOpenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract:
            "Open the board in a browser on this computer (an address that logs one browser in, once, within ten minutes); --lan serves phones on the home network."
    )
    @OptionGroup var options: ClientOptions
    @Option(help: "A game id or unique prefix to open (default: the most recent game in progress).")
    var game: String?
    @Option(help: "A player this computer hosts (name or id) whom the browser plays as (default: your own player).")
    var player: String?
    @Flag(name: .customLong("no-open"), help: "Only print the address; do not start a browser.")
    var noOpen = false
    @Flag(
        inversion: .prefixedNo,
        help: "Serve the board to phones on the home network, over TLS with this computer's own certificate (kept across restarts), or stop.")
    var lan: Bool?

    func run() async throws {
        if let lan {
            try await callDaemon(options, Commands.WebLAN.self, .init(enabled: lan)) { WebLauncher.lanText($0, asked: lan) }
            return
        }
        let opened = Box()
        try await callDaemon(options, Commands.Web.self, .init(game: game, player: player)) { result in
            if !noOpen, !options.json, let how = WebLauncher.open(result.url, socketPath: options.socketPath) {
                opened.text = how
            }
            let intro = opened.text.map { "Opening the board with \($0).\n" } ?? "Open this address in a browser on this computer:\n"
            return intro + "  \(result.url)\n"
                + "It logs one browser in and works once, for ten minutes; that browser then opens \(result.address) by itself.\n"
        }
    }

    private final class Box: @unchecked Sendable { var text: String? }
}

/// `sweeper web pair`: a one-time code that pairs one phone.
struct WebPairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Print a one-time code (five minutes) and its address as a QR code, to pair one phone on the home network.")
    @OptionGroup var options: ClientOptions
    func run() async throws {
        try await callDaemon(options, Commands.WebPair.self, Empty()) { r in
            var text = "Pair a phone: open this address on it (or scan the code below), within five minutes:\n"
            for url in r.urls { text += "  \(url)\n" }
            if r.urls.isEmpty { text += "  (this computer has no address on a network: connect it first)\n" }
            text += "Or open https://ADDRESS:PORT/ and type the code \(r.code).\n"
            if let url = r.urls.first { text += WebLauncher.qr(url) }
            text += "The phone warns that the certificate is not trusted: it is this computer's own. Before going on,\n"
            text += "check that the phone shows this SHA-256 fingerprint for it:\n  \(r.fingerprint)\n"
            return text
        }
    }
}

/// `sweeper web devices`: the paired browsers.
struct WebDevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "devices", abstract: "List the browsers paired on the home network.")
    @OptionGroup var options: ClientOptions
    func run() async throws {
        try await callDaemon(options, Commands.WebDevices.self, Empty()) { r in
            guard !r.devices.isEmpty else { return "No browser is paired. `sweeper web pair` pairs one.\n" }
            return r.devices.map { WebLauncher.line(of: $0) }.joined()
        }
    }
}

/// `sweeper web revoke`: forget a paired browser.
struct WebRevokeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke", abstract: "Forget a paired browser: its pages close at once and it must pair again.")
    @OptionGroup var options: ClientOptions
    @Argument(help: "The browser's id (or a unique start of it), as `sweeper web devices` lists it, or its name.")
    var device: String
    func run() async throws {
        try await callDaemon(options, Commands.WebRevoke.self, .init(device: device)) { d in
            "Revoked \(d.device) (\(d.name)): its pages closed, and it must pair again.\n"
        }
    }
}

extension WebLauncher {
    /// What `--lan` or `--no-lan` says.
    static func lanText(_ r: Commands.WebLAN.Result, asked: Bool) -> String {
        if let problem = r.problem { return "The board is not served to the home network: \(problem)\n" }
        guard r.enabled else { return "The board is served on this computer only.\n" }
        var text = "The board is served to the home network at:\n"
        for address in r.addresses { text += "  \(address)\n" }
        if let fingerprint = r.fingerprint { text += "Its certificate's SHA-256 fingerprint: \(fingerprint)\n" }
        text += "`sweeper web pair` pairs a phone.\n"
        return text
    }

    /// `url` as a QR code for a phone's camera: dark modules on a light
    /// ground whatever the terminal's colours (half blocks in black on
    /// white), in ASCII where the locale is not UTF-8; nothing when standard
    /// output is not a terminal.
    static func qr(_ url: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        guard isatty(STDOUT_FILENO) == 1, let code = try? QRCode(url, correction: .low) else { return "" }
        guard Glyphs.localeIsUTF8(environment) else { return code.asciiText(quietZone: 2) + "\n" }
        let lines = code.terminalText(quietZone: 2).split(separator: "\n", omittingEmptySubsequences: false)
        return lines.map { "\u{1B}[30;107m" + $0 + "\u{1B}[0m\n" }.joined()
    }

    /// A paired browser as a line: id, what it is, when paired and last used.
    static func line(of d: WebDeviceInfo, indent: String = "") -> String {
        "\(indent)\(d.device)  \(d.name)  paired \(when(d.pairedAt)), last used \(when(d.lastUsedAt))\n"
    }

    /// A time in milliseconds since 1970, in local time.
    static func when(_ millis: Int64) -> String {
        String(localTime: Double(millis) / 1000, format: "%Y-%m-%d %H:%M")
    }
}

/// Starts the desktop's browser on a login address without putting the
/// secret on a command line (which every user of the machine can read in
/// `ps`): it writes a page that forwards to the address into the control
/// socket's private folder, and opens that file.
enum WebLauncher {
    /// Opens `url`; returns what opened it, or nil when there is no desktop
    /// browser to start (no display, no `xdg-open`).
    static func open(_ url: String, socketPath: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        guard environment["DISPLAY"].map({ !$0.isEmpty }) == true || environment["WAYLAND_DISPLAY"].map({ !$0.isEmpty }) == true else {
            return nil
        }
        guard let opener = SweeperPaths.executable("xdg-open", onPath: environment["PATH"] ?? "/usr/bin:/bin") else { return nil }
        let file = SweeperPaths.folder(of: socketPath) + "/web-login.html"
        let escaped = url.replacing("&", with: "&amp;").replacing("\"", with: "&quot;")
        let page =
            "<!doctype html><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"0;url=\(escaped)\"><title>Sweeper</title><a href=\"\(escaped)\">Open the board</a>\n"
        unlink(file)
        let fd = Glibc.open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return nil }
        let bytes = Array(page.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count else { return nil }
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(opener), strdup("file://" + file), nil]
        defer { for a in argv { free(a) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        guard posix_spawn(&pid, opener, &actions, nil, argv, environ) == 0 else { return nil }
        return "xdg-open"
    }
}
