import SweeperCrypto
import SweeperMessages

/// The members' address notes this daemon keeps: the newest of each
/// author, for as long as news of it keeps coming. Pure: times are the
/// daemon clock's steady seconds and wall milliseconds, passed in.
struct AddressBook: Sendable {
    /// A note kept, and when it was taken (steady seconds).
    struct Kept: Sendable, Equatable {
        var note: AddressNote
        var takenAt: Double
    }

    /// How long a note lives after it was taken without a newer one of its
    /// author: its author signs anew every ``AddressGossip/refreshInterval``,
    /// so a note this old is of a device that left.
    static let lifetime: Double = 30 * 60
    /// How close to this daemon's wall clock a note's serial (its author's
    /// wall clock when it signed) must be for the note to count as news of
    /// its author: a copy kept by a relay for half an hour says nothing of now.
    static let freshnessMillis: UInt64 = 10 * 60 * 1000

    /// How long after taking an author's note a newer one is dropped: an
    /// author signs every few minutes, so one that signs faster only makes
    /// the circle relay a stream of notes.
    static let minimumGap: Double = 5

    private(set) var kept: [PeerID: Kept] = [:]

    /// Keeps `note` when it is newer than its author's kept one (or that
    /// one has expired), and that one was taken ``minimumGap`` ago or more.
    /// Returns whether it was taken.
    mutating func take(_ note: AddressNote, at now: Double) -> Bool {
        if let held = kept[note.author], now - held.takenAt < Self.lifetime {
            guard note.serial > held.note.serial, now - held.takenAt >= Self.minimumGap else { return false }
        }
        kept[note.author] = Kept(note: note, takenAt: now)
        return true
    }

    /// Whether `note` is news of its author now: signed within
    /// ``freshnessMillis`` of `wallMillis`, either way.
    static func isFresh(_ note: AddressNote, wallMillis: UInt64) -> Bool {
        let gap = note.serial > wallMillis ? note.serial - wallMillis : wallMillis - note.serial
        return gap <= freshnessMillis
    }

    /// Drops the notes older than ``lifetime`` and those whose author
    /// `keeps` refuses (no member now); returns their authors.
    mutating func expire(at now: Double, keeping keeps: (PeerID) -> Bool = { _ in true }) -> [PeerID] {
        let gone = kept.filter { now - $0.value.takenAt >= Self.lifetime || !keeps($0.key) }.keys.sorted()
        for author in gone { kept[author] = nil }
        return gone
    }

    /// Every note kept, by author.
    var notes: [AddressNote] { kept.values.map(\.note).sorted { $0.author < $1.author } }
}
