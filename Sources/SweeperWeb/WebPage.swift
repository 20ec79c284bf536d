import FoundationEssentials
import SweeperConventions

/// The page's files, embedded in the binary from `Page/` (HTML, CSS and
/// JavaScript written by hand: no framework, no build step). For work on
/// the page, `SWEEPER_WEB_DIR` in the daemon's environment serves them
/// from that folder instead, read again on each request.
enum WebPage {
    /// The folder the files are read from instead of the binary, if set.
    static let folder = ProcessInfo.processInfo.environment["SWEEPER_WEB_DIR"].flatMap { $0.isEmpty ? nil : $0 }

    /// A file of the page: its bytes and its media type.
    struct Asset {
        var bytes: [UInt8]
        var contentType: String
    }

    /// The file served at `path`, if any.
    static func asset(at path: String) -> Asset? {
        guard let embedded = embedded(at: path) else { return nil }
        if let folder, let bytes = try? FileDescriptorReader.readAll(path: folder + (path == "/" ? "/index.html" : path), limit: 1 << 20) {
            return Asset(bytes: bytes, contentType: embedded.contentType)
        }
        return embedded
    }

    private static func embedded(at path: String) -> Asset? {
        switch path {
        case "/", "/index.html": Asset(bytes: PackageResources.index_html, contentType: "text/html; charset=utf-8")
        case "/app.js": Asset(bytes: PackageResources.app_js, contentType: "text/javascript; charset=utf-8")
        case "/board.js": Asset(bytes: PackageResources.board_js, contentType: "text/javascript; charset=utf-8")
        case "/board-input.js": Asset(bytes: PackageResources.board_input_js, contentType: "text/javascript; charset=utf-8")
        case "/play.js": Asset(bytes: PackageResources.play_js, contentType: "text/javascript; charset=utf-8")
        case "/panels.js": Asset(bytes: PackageResources.panels_js, contentType: "text/javascript; charset=utf-8")
        case "/keys.js": Asset(bytes: PackageResources.keys_js, contentType: "text/javascript; charset=utf-8")
        case "/style.css": Asset(bytes: PackageResources.style_css, contentType: "text/css; charset=utf-8")
        case "/icon.svg": Asset(bytes: PackageResources.icon_svg, contentType: "image/svg+xml")
        default: nil
        }
    }

    /// Every file's path.
    static let files = ["/", "/app.js", "/board.js", "/board-input.js", "/play.js", "/panels.js", "/keys.js", "/style.css", "/icon.svg"]

    /// The size of every file, in bytes (the page's weight).
    static var weight: Int {
        files.reduce(0) { $0 + (asset(at: $1)?.bytes.count ?? 0) }
    }

    /// The pairing page's policy: no script at all, and its one form sent to the board.
    static let pairingPolicy = "default-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

    /// What every answer carries: one origin, nothing from outside, no
    /// framing by another site, nothing cached or sniffed.
    static let securityHeaders: [(String, String)] = [
        (
            "Content-Security-Policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        ),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "no-referrer"),
        ("Cross-Origin-Opener-Policy", "same-origin"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
        ("Cache-Control", "no-store"),
    ]
}
