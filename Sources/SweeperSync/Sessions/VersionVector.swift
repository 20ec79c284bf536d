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

    /// The total number of ops the vector covers (at most `UInt64.max`:
    /// a peer's summary may claim any sequence numbers).
    public var opCount: UInt64 {
        heads.values.reduce(0) { total, seq in
            let (sum, overflow) = total.addingReportingOverflow(seq)
            return overflow ? .max : sum
        }
    }

    /// How many ops this vector holds that `other` lacks (`ahead`) and
    /// `other` holds that this lacks (`behind`), summed over authors. Each
    /// sum stops at `Int.max`: a peer's summary may claim any sequence
    /// numbers, and counting them must not trap.
    public func lag(against other: VersionVector) -> (ahead: Int, behind: Int) {
        var ahead = 0
        var behind = 0
        func add(_ total: inout Int, _ difference: UInt64) {
            let d = difference > UInt64(Int.max) ? Int.max : Int(difference)
            let (sum, overflow) = total.addingReportingOverflow(d)
            total = overflow ? .max : sum
        }
        for author in Set(heads.keys).union(other.heads.keys) {
            let mine = self[author], theirs = other[author]
            if mine > theirs { add(&ahead, mine - theirs) } else { add(&behind, theirs - mine) }
        }
        return (ahead, behind)
    }

    /// Whether this vector holds everything `other` does.
    public func dominates(_ other: VersionVector) -> Bool {
        other.heads.allSatisfy { self[$0.key] >= $0.value }
    }
}
