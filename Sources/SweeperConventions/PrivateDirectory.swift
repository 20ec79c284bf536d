#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a private directory could not be made.
public struct PrivateDirectoryError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The directory.
    public var path: String
    /// What the system said.
    public var detail: String

    public var description: String { "cannot make the directory \(path): \(detail)" }
}

/// Directories only their owner may enter (mode 0700): the state directory
/// and the socket's directory.
public enum PrivateDirectory {
    /// Makes `path` and any missing parents; the ones made here get mode
    /// 0700. With `tighten`, an existing `path` is set to 0700 too (the state
    /// directory; the socket's directory may be shared and is left alone).
    public static func make(_ path: String, tighten: Bool = false) throws(PrivateDirectoryError) {
        var st = stat()
        if stat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFDIR else { throw PrivateDirectoryError(path: path, detail: "not a directory") }
        } else {
            var built = path.hasPrefix("/") ? "" : "."
            for component in path.split(separator: "/") {
                built += "/" + component
                if mkdir(built, 0o700) != 0 && errno != EEXIST {
                    throw PrivateDirectoryError(path: path, detail: String(cString: strerror(errno)))
                }
            }
            guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else {
                throw PrivateDirectoryError(path: path, detail: "not a directory")
            }
        }
        if tighten && chmod(path, 0o700) != 0 {
            throw PrivateDirectoryError(path: path, detail: String(cString: strerror(errno)))
        }
    }

    /// Makes `path` (its parent must exist) with mode 0700, or takes it as
    /// it is only when it is a directory, not a symbolic link, owned by this
    /// user, that no one else may enter: a directory in a place every user
    /// may write (`/tmp`), which another user may have made first to catch
    /// this user's socket or lock file.
    public static func makeOwned(_ path: String) throws(PrivateDirectoryError) {
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw PrivateDirectoryError(path: path, detail: String(cString: strerror(errno)))
        }
        var st = stat()
        guard lstat(path, &st) == 0 else { throw PrivateDirectoryError(path: path, detail: String(cString: strerror(errno))) }
        switch st.st_mode & S_IFMT {
        case S_IFDIR: break
        case S_IFLNK: throw PrivateDirectoryError(path: path, detail: "it is a symbolic link; remove it and start again")
        default: throw PrivateDirectoryError(path: path, detail: "not a directory")
        }
        guard st.st_uid == geteuid() else {
            throw PrivateDirectoryError(
                path: path, detail: "it belongs to user \(st.st_uid), not to you (user \(geteuid())); remove it, or set XDG_RUNTIME_DIR")
        }
        guard st.st_mode & 0o077 == 0 else {
            throw PrivateDirectoryError(
                path: path, detail: "other users may enter it (mode \(String(st.st_mode & 0o777, radix: 8))); make it 0700")
        }
    }
}
