import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SweeperControl
import SweeperConventions

/// `sweeper web`: the web board's address, logged in for one browser.
struct WebCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web",
        abstract: "Open the board in a browser on this computer (an address that logs one browser in, once, within ten minutes).")
    @OptionGroup var options: ClientOptions
    @Option(help: "A game id or unique prefix to open (default: the most recent game in progress).")
    var game: String?
    @Flag(name: .customLong("no-open"), help: "Only print the address; do not start a browser.")
    var noOpen = false

    func run() async throws {
        let opened = Box()
        try await callDaemon(options, Commands.Web.self, .init(game: game)) { result in
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
        guard let opener = executable("xdg-open", path: environment["PATH"] ?? "/usr/bin:/bin") else { return nil }
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

    /// The first executable called `name` on `path`.
    static func executable(_ name: String, path: String) -> String? {
        for folder in path.split(separator: ":") where !folder.isEmpty {
            let candidate = "\(folder)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
