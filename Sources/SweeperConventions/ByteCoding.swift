/// Why bytes from the network or the disk could not be decoded. Every
/// decoder of the peer protocol and the store (ops, sync messages,
/// membership records, notes) throws one of these rather than trapping.
public enum ByteDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The input ended in the middle of a field.
    case truncated(field: String)
    /// Bytes were left over after a complete value.
    case trailingBytes(count: Int)
    /// A format version this build does not know.
    case unknownVersion(UInt8)
    /// An op kind or message type this build does not know.
    case unknownKind(field: String, value: UInt8)
    /// A variable-length integer longer than 64 bits, or not in its shortest form.
    case badVarint(field: String)
    /// A number outside what the field allows.
    case valueOutOfRange(field: String, value: UInt64)
    /// A cell index past the largest board.
    case cellOutOfRange(Int)
    /// A count or length larger than the format's limit.
    case tooLarge(field: String, limit: Int)
    /// Bits that must be zero were set.
    case reservedBitsSet(field: String)
    /// A genesis whose parameters or mine layout are invalid.
    case invalidGenesis(String)
    /// Runs of cells that overlap, touch, or are empty.
    case badRuns
    /// Text that is not UTF-8.
    case invalidText(field: String)
    /// A list that must be in strictly ascending order is not.
    case unordered(field: String)
    /// A value the field does not allow, and why.
    case invalid(field: String, reason: String)

    public var description: String {
        switch self {
        case .truncated(let f): "input ends inside \(f)"
        case .trailingBytes(let n): "\(n) unexpected bytes after the end"
        case .unknownVersion(let v): "unknown format version \(v)"
        case .unknownKind(let f, let v): "unknown \(f) \(v)"
        case .badVarint(let f): "\(f) is not a valid variable-length integer"
        case .valueOutOfRange(let f, let v): "\(f) \(v) is out of range"
        case .cellOutOfRange(let c): "cell \(c) is past the largest board"
        case .tooLarge(let f, let l): "\(f) is larger than the limit of \(l)"
        case .reservedBitsSet(let f): "reserved bits are set in \(f)"
        case .invalidGenesis(let why): "invalid genesis: \(why)"
        case .badRuns: "cell runs are empty, overlapping or not in order"
        case .invalidText(let f): "\(f) is not UTF-8"
        case .unordered(let f): "\(f) are not in strictly ascending order"
        case .invalid(let f, let why): "\(f) \(why)"
        }
    }
}

/// Appends fixed-width and LEB128 fields to a byte buffer: the one byte
/// codec of every format the daemons exchange or store.
package struct ByteWriter {
    package var bytes: [UInt8] = []

    package init(capacity: Int = 64) { bytes.reserveCapacity(capacity) }

    @inlinable package mutating func byte(_ b: UInt8) { bytes.append(b) }

    package mutating func append(_ b: some Sequence<UInt8>) { bytes.append(contentsOf: b) }

    /// Appends whole byte arrays (keys, hashes, payloads) without the
    /// generic path, which looks up type metadata on every call.
    @inlinable package mutating func append(_ b: [UInt8]) { bytes.append(contentsOf: b) }

    /// Unsigned LEB128, shortest form.
    @inlinable package mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    package mutating func varint(_ value: Int) { varint(UInt64(max(0, value))) }

    /// The bytes ``varint(_:)-(UInt64)`` writes for `value`.
    package static func varintSize(_ value: UInt64) -> Int {
        var n = 1
        var v = value
        while v >= 0x80 {
            v >>= 7
            n += 1
        }
        return n
    }

    /// Signed value, zigzag then LEB128.
    package mutating func signedVarint(_ value: Int64) {
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// Little-endian 64-bit.
    package mutating func uint64(_ value: UInt64) {
        for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }

    /// A length-prefixed byte string.
    package mutating func lengthPrefixed(_ b: [UInt8]) {
        varint(b.count)
        bytes.append(contentsOf: b)
    }
}

/// Reads fields from bytes, throwing ``ByteDecodingError`` at the first problem.
package struct ByteReader {
    let bytes: [UInt8]
    private(set) var offset: Int
    let end: Int

    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
        offset = 0
        end = bytes.count
    }

    package var remaining: Int { end - offset }
    package var isAtEnd: Bool { offset >= end }

    package mutating func byte(_ field: String) throws(ByteDecodingError) -> UInt8 {
        guard offset < end else { throw .truncated(field: field) }
        defer { offset += 1 }
        return bytes[offset]
    }

    package mutating func take(_ count: Int, _ field: String) throws(ByteDecodingError) -> [UInt8] {
        guard count >= 0, remaining >= count else { throw .truncated(field: field) }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    package mutating func varint(_ field: String) throws(ByteDecodingError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < end else { throw .truncated(field: field) }
            let b = bytes[offset]
            offset += 1
            if shift == 63 && b > 1 { throw .badVarint(field: field) }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 {
                // Shortest form: no trailing zero group (except the value 0 itself).
                if b == 0 && shift > 0 { throw .badVarint(field: field) }
                return result
            }
            shift += 7
            if shift > 63 { throw .badVarint(field: field) }
        }
    }

    /// A varint that must fit `limit` (inclusive), as an `Int`.
    package mutating func int(_ field: String, max limit: Int) throws(ByteDecodingError) -> Int {
        let v = try varint(field)
        guard v <= UInt64(limit) else { throw .valueOutOfRange(field: field, value: v) }
        return Int(v)
    }

    package mutating func signedVarint(_ field: String) throws(ByteDecodingError) -> Int64 {
        let v = try varint(field)
        return Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1)
    }

    package mutating func uint64(_ field: String) throws(ByteDecodingError) -> UInt64 {
        guard remaining >= 8 else { throw .truncated(field: field) }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
        offset += 8
        return v
    }

    package mutating func lengthPrefixed(_ field: String, max limit: Int) throws(ByteDecodingError) -> [UInt8] {
        let n = try varint(field)
        guard n <= UInt64(limit) else { throw .tooLarge(field: field, limit: limit) }
        return try take(Int(n), field)
    }

    /// A count (a varint up to `limit`), then that many elements, each
    /// read by `element`.
    package mutating func list<Element>(
        _ field: String, max limit: Int, _ element: (inout ByteReader) throws(ByteDecodingError) -> Element
    ) throws(ByteDecodingError) -> [Element] {
        let count = try int(field, max: limit)
        var out: [Element] = []
        for _ in 0..<count { out.append(try element(&self)) }
        return out
    }

    package func expectEnd() throws(ByteDecodingError) {
        guard isAtEnd else { throw .trailingBytes(count: remaining) }
    }
}
