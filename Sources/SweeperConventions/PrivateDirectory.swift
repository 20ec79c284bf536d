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
}
