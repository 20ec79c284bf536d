import SweeperCrypto

/// Reads the fields of a signed note (``PresenceNote``, ``ProfileNote``)
/// from a link message's body, throwing a malformed-message error that
/// names the note at the first problem.
struct NoteReader {
    private let bytes: ArraySlice<UInt8>
    private var index: Int
    /// The kind of note, for error messages ("presence", "profile").
    let what: String

    init(_ bytes: ArraySlice<UInt8>, what: String) {
        self.bytes = bytes
        index = bytes.startIndex
        self.what = what
    }

    /// The next `count` bytes.
    mutating func take(_ count: Int) throws(PeerConnectionError) -> ArraySlice<UInt8> {
        guard count >= 0, bytes.endIndex - index >= count else { throw .malformedMessage("short \(what)") }
        defer { index += count }
        return bytes[index..<(index + count)]
    }

    /// The next byte.
    mutating func byte() throws(PeerConnectionError) -> UInt8 {
        try take(1).first ?? 0
    }

    /// An unsigned LEB128 number in its shortest form, at most `limit`.
    mutating func varint(max limit: UInt64 = .max) throws(PeerConnectionError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            if shift == 63, b > 1 { throw .malformedMessage("\(what) number too large") }
            value |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 {
                if b == 0, shift > 0 { throw .malformedMessage("\(what) number not in its shortest form") }
                guard value <= limit else { throw .malformedMessage("\(what) number out of range") }
                return value
            }
            shift += 7
        }
    }

    /// A 32-byte peer key.
    mutating func peer() throws(PeerConnectionError) -> PeerID {
        guard let peer = try? PeerID(bytes: try take(PeerID.byteCount)) else { throw .malformedMessage("short \(what)") }
        return peer
    }

    /// The closing 64-byte signature; nothing may follow it.
    mutating func signatureAtEnd() throws(PeerConnectionError) -> Signature {
        guard let signature = Signature(bytes: try take(Signature.byteCount)) else { throw .malformedMessage("short \(what)") }
        guard index == bytes.endIndex else { throw .malformedMessage("\(what) of the wrong length") }
        return signature
    }
}

extension Array where Element == UInt8 {
    /// Appends `value` as unsigned LEB128.
    mutating func appendVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        append(UInt8(v))
    }
}
