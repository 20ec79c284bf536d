import SweeperConventions
import SweeperCrypto

extension ByteReader {
    /// A 32-byte peer key.
    mutating func peer(_ field: String) throws(ByteDecodingError) -> PeerID {
        guard let peer = try? PeerID(bytes: try take(PeerID.byteCount, field)) else { throw .truncated(field: field) }
        return peer
    }

    /// An unsigned LEB128 number in its shortest form, at most `limit`.
    mutating func varint(_ field: String, max limit: UInt64) throws(ByteDecodingError) -> UInt64 {
        let value = try varint(field)
        guard value <= limit else { throw .valueOutOfRange(field: field, value: value) }
        return value
    }

    /// The closing 64-byte signature of a note; nothing may follow it.
    mutating func signatureAtEnd(_ field: String) throws(ByteDecodingError) -> Signature {
        guard let signature = Signature(bytes: try take(Signature.byteCount, field)) else { throw .truncated(field: field) }
        try expectEnd()
        return signature
    }
}
