#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a user's Sweeper files live by default, by the XDG base directory
/// rules: the client, the daemon and `sweeper play`'s auto-start all ask
/// here, so they agree. A variable that is unset, empty or not an absolute
/// path is ignored, as the XDG specification says.
public struct SweeperPaths: Sendable {
    /// The environment the paths come from.
    public var environment: [String: String]

    /// Paths from `environment`.
    public init(environment: [String: String]) {
        self.environment = environment
    }

    /// The value of `name` when it is an absolute path.
    private func absolute(_ name: String) -> String? {
        guard let value = environment[name], value.hasPrefix("/") else { return nil }
        return value
    }

    /// The home directory: `$HOME`, else the password database's.
    public var home: String {
        if let h = absolute("HOME") { return h }
        if let pw = getpwuid(getuid()), let dir = pw.pointee.pw_dir { return String(cString: dir) }
        return "/"
    }

    /// Where the daemon keeps its database: `$XDG_STATE_HOME/sweeper`,
    /// else `~/.local/state/sweeper`.
    public var stateDirectory: String {
        (absolute("XDG_STATE_HOME") ?? home + "/.local/state") + "/sweeper"
    }

    /// The config file: `$XDG_CONFIG_HOME/sweeper/config.toml`, else
    /// `~/.config/sweeper/config.toml`.
    public var configFile: String {
        (absolute("XDG_CONFIG_HOME") ?? home + "/.config") + "/sweeper/config.toml"
    }

    /// The directory of the control socket: `$XDG_RUNTIME_DIR/sweeper`,
    /// else `/tmp/sweeper-UID`.
    public var runtimeDirectory: String {
        if let runtime = absolute("XDG_RUNTIME_DIR") { return runtime + "/sweeper" }
        return Self.sharedRuntimeDirectory
    }

    /// The socket's directory without `XDG_RUNTIME_DIR`: `/tmp/sweeper-UID`,
    /// in a directory every user may write, so another user may have made
    /// it first. It is used only when this user owns it, with mode 0700,
    /// and it is not a symbolic link (``PrivateDirectory/makeOwned(_:)``).
    public static var sharedRuntimeDirectory: String { "/tmp/sweeper-\(getuid())" }

    /// The control socket: `$SWEEPER_SOCKET` when it is set, else
    /// `control.sock` in ``runtimeDirectory``.
    public var socket: String {
        if let path = environment["SWEEPER_SOCKET"], !path.isEmpty { return path }
        return runtimeDirectory + "/control.sock"
    }
}

extension SweeperPaths {
    /// The folder that holds `path`, as `dirname` gives it: `/a/b` for
    /// `/a/b/c`, `/` for `/c`, `.` for a bare name.
    public static func folder(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        let folder = trimmed[..<slash]
        return folder.isEmpty ? "/" : String(folder)
    }

    /// The first executable file called `name` in the folders of `path`
    /// (a `PATH` value: folders separated by colons), or nil.
    public static func executable(_ name: String, onPath path: String) -> String? {
        for folder in path.split(separator: ":") where !folder.isEmpty {
            let candidate = "\(folder)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
