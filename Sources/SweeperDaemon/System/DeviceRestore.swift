import FoundationEssentials
import SweeperConventions
import SweeperCrypto
import SweeperStore

/// Puts a device's backup (`sweeper backup`) in place on this machine, as
/// `sweeper restore` does: into the state directory the daemon would use,
/// with no daemon running on it (its lock is held meanwhile, so none starts
/// half-way), never over a device already there unless asked (it is then
/// kept aside).
public enum DeviceRestore {
    /// What a restore did.
    public struct Report: Sendable, Equatable, Encodable {
        /// The state directory it went into.
        public var stateDirectory: String
        /// The restored device's peer id.
        public var peerID: String
        /// The games it holds.
        public var games: Int
        /// Its size in bytes.
        public var bytes: Int
        /// Where the database that was there went, when one was.
        public var movedAside: String?

        /// `sweeper restore --json` names them as `backup` does (control protocol 2).
        private enum CodingKeys: String, CodingKey {
            case stateDirectory, bytes, movedAside
            case peerID = "peer", games = "gameCount"
        }
    }

    /// Why a restore was refused; nothing was changed.
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Restores the backup at `file` into the state directory `overrides`
    /// and the configuration give; `stamp` names a database moved aside.
    public static func restore(_ file: String, overrides: DaemonOverrides, replacing: Bool, stamp: String) throws -> Report {
        let settings: DaemonSettings
        do {
            settings = try DaemonSettings.resolve(overrides: overrides)
        } catch {
            throw Refusal(description: "\(error)")
        }
        let directory = settings.stateDirectory
        do {
            try PrivateDirectory.make(directory, tighten: true)
        } catch {
            throw Refusal(description: "cannot use the state directory \(directory): \(error.detail)")
        }
        let lock: InstanceLock
        do {
            lock = try InstanceLock(path: directory + "/sweeperd.lock", resource: "the state directory \(directory)")
        } catch {
            throw Refusal(description: "\(error): stop it first (systemctl --user stop sweeperd), then restore")
        }
        defer { lock.release() }
        let (contents, aside) = try Store.restore(from: file, intoDirectory: directory, replacing: replacing, stamp: stamp)
        let peer = (try? PeerID(bytes: Array(contents.publicKey)))?.description ?? "unknown"
        return Report(stateDirectory: directory, peerID: peer, games: contents.games, bytes: contents.bytes, movedAside: aside)
    }
}
