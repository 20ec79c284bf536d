import SweeperConventions
import SweeperCrypto

/// A note a player signs and every member spreads: where they look
/// (``PresenceNote``), who they are (``ProfileNote``), how long they played
/// a game (``PlayNote``). Each author's newer note (a greater serial)
/// replaces its older one; a note is taken only when ``isAuthentic``.
///
/// The daemon spreads every kind the same way (``PeerMessage`` carries
/// them): a note new to a member goes on to its other links, an older copy
/// stops where it meets the newer one.
public protocol SignedNote: Sendable, Hashable {
    /// The player who signed it.
    var author: PeerID { get }
    /// Orders an author's notes: the greater is the newer.
    var serial: UInt64 { get }
    /// Whether the signature is the author's over the note.
    var isAuthentic: Bool { get }
    /// The note as it travels: its signed fields, then the signature.
    var encoded: [UInt8] { get }
    /// Decodes a note, refusing any malformed field.
    init(decoding bytes: some Collection<UInt8>) throws(ByteDecodingError)
}

extension PresenceNote: SignedNote {}
extension ProfileNote: SignedNote {}
extension PlayNote: SignedNote {}
