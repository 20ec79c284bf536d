import SweeperCrypto

/// What a replica holds of one game: for each author, the highest sequence
/// number it holds with every earlier one (a contiguous prefix).
public struct VersionVector: Hashable, Sendable {
    /// Author → highest contiguous seq.
    public private(set) var heads: [PeerID: UInt64]

    /// An empty vector (nothing held).
    public init(heads: [PeerID: UInt64] = [:]) { self.heads = heads.filter { $0.value > 0 } }

    /// The highest contiguous seq held from `author` (0 when none).
    public subscript(author: PeerID) -> UInt64 { heads[author] ?? 0 }

    /// Raises `author`'s entry to `seq` if it is lower.
    public mutating func advance(_ author: PeerID, to seq: UInt64) {
        if seq > self[author] { heads[author] = seq }
    }

    /// The total number of ops the vector covers.
    public var opCount: UInt64 { heads.values.reduce(0, +) }

    /// Whether this vector holds everything `other` does.
    public func dominates(_ other: VersionVector) -> Bool {
        other.heads.allSatisfy { self[$0.key] >= $0.value }
    }
}
