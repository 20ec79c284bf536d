import FoundationEssentials
import SweeperConventions
import SweeperCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The web board's own TLS certificate for the home network: a P-256 key
/// and a self-signed X.509 certificate, made once (by `openssl`, as
/// Debian's own self-signed certificates are) and kept in the state folder
/// beside the daemon's identity. A phone cannot check it against an
/// authority; the player compares its SHA-256 fingerprint, which
/// `sweeper web pair` prints and the browser shows, as Syncthing's device
/// IDs are compared.
public struct WebCertificate: Sendable {
    /// The certificate, DER.
    public let der: [UInt8]
    /// The private key, PEM.
    public let keyPEM: [UInt8]

    /// The file names in the state folder.
    static let keyFile = "web-tls-key.pem"
    static let certificateFile = "web-tls-cert.der"

    /// The certificate's SHA-256 fingerprint as browsers show it: 32 bytes
    /// in upper-case hex, colon-separated.
    public var fingerprint: String {
        SHA256Digest.of(der).map { String(cFormat: "%02X", Int($0)) }.joined(separator: ":")
    }

    /// The certificate in `folder`, made there (key 0600) the first time.
    public static func load(folder: String, openssl: String = "/usr/bin/openssl") throws -> WebCertificate {
        let keyPath = folder + "/" + keyFile
        let certificatePath = folder + "/" + certificateFile
        if let kept = read(keyPath: keyPath, certificatePath: certificatePath) { return kept }
        let (newKey, newCertificate) = (keyPath + ".new", certificatePath + ".new")
        unlink(newKey)
        unlink(newCertificate)
        let status = try run([
            openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "3650",
            "-subj", "/CN=Sweeper", "-keyout", newKey, "-out", newCertificate, "-outform", "DER",
        ])
        chmod(newKey, 0o600)
        guard status == 0, read(keyPath: newKey, certificatePath: newCertificate) != nil,
            rename(newKey, keyPath) == 0, rename(newCertificate, certificatePath) == 0,
            let made = read(keyPath: keyPath, certificatePath: certificatePath)
        else {
            unlink(newKey)
            unlink(newCertificate)
            throw WebCertificateError(description: "\(openssl) could not make the web board's certificate in \(folder) (exit \(status))")
        }
        return made
    }

    private static func read(keyPath: String, certificatePath: String) -> WebCertificate? {
        guard let key = try? FileDescriptorReader.readAll(path: keyPath, limit: 1 << 16), !key.isEmpty,
            let der = try? FileDescriptorReader.readAll(path: certificatePath, limit: 1 << 16), der.first == 0x30
        else { return nil }
        return WebCertificate(der: der, keyPEM: key)
    }

    /// Runs a program to its end, its output discarded; its exit status.
    private static func run(_ argv: [String]) throws -> Int32 {
        guard access(argv[0], X_OK) == 0 else {
            throw WebCertificateError(description: "\(argv[0]) is missing: install openssl to serve the board to the home network")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let args: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for a in args { free(a) } }
        let env: [UnsafeMutablePointer<CChar>?] = [strdup("PATH=/usr/bin:/bin"), nil]
        defer { for e in env { free(e) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, argv[0], &actions, nil, args, env)
        guard rc == 0 else { throw WebCertificateError(description: "cannot run \(argv[0]): \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}

/// The certificate could not be made.
public struct WebCertificateError: Error, CustomStringConvertible {
    public var description: String
}
