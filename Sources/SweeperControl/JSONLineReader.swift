/// A JSON value as ``JSONLineReader`` reads it.
///
/// The control protocol's hot lines (a move's `cells` event, a cursor's
/// `presence` event, a viewer's `cursor` line) are read with it instead of
/// `JSONDecoder`, whose generic path costs a cold viewer or daemon some
/// 50–100 µs a line. What it reads is only taken when every field has the
/// expected type; anything else goes to `JSONDecoder`, which decides, so
/// both paths give the same value or the same refusal.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// A number written without fraction or exponent that fits an `Int`.
    case int(Int)
    /// Any other number.
    case double(Double)
    case string(String)
    case array([JSONValue])
    /// An object; a key given twice makes the whole text unreadable here.
    case object([String: JSONValue])

    /// The string, if this is one.
    public var string: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The integer, if this is one.
    public var int: Int? {
        if case .int(let i) = self { return i }
        return nil
    }

    /// The number, if this is one.
    public var double: Double? {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        default: nil
        }
    }

    /// The truth value, if this is one.
    public var bool: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The members, if this is an object.
    public var object: [String: JSONValue]? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// The elements, if this is an array.
    public var array: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }
}

/// Reads one JSON text (RFC 8259), such as a control line, into a
/// ``JSONValue``, in one pass over its bytes.
///
/// It is strict where `JSONDecoder` is: no trailing commas, comments or
/// leading zeros, strings of valid UTF-8 with no raw control characters,
/// escapes as JSON has them. It gives up (nil) on what it does not read:
/// nesting deeper than ``depthLimit``, and a key repeated in an object.
public enum JSONLineReader {
    /// The deepest nesting of arrays and objects read.
    public static let depthLimit = 32

    /// The value of `bytes`, which may end in whitespace (a line's newline);
    /// nil when they are not one JSON text that this reads.
    public static func value(_ bytes: UnsafeRawBufferPointer) -> JSONValue? {
        var cursor = Cursor(bytes: bytes.bindMemory(to: UInt8.self))
        guard let value = cursor.value(depth: 0) else { return nil }
        cursor.skipWhitespace()
        return cursor.atEnd ? value : nil
    }

    /// The members of `bytes` when they are one JSON object whose keys are
    /// all among `keys`; nil otherwise, given up at the first other key
    /// before its value is read (so a long answer is not read twice to
    /// learn it is not an event).
    public static func object(_ bytes: UnsafeRawBufferPointer, keys: Set<String>) -> [String: JSONValue]? {
        var cursor = Cursor(bytes: bytes.bindMemory(to: UInt8.self))
        cursor.skipWhitespace()
        guard !cursor.atEnd, cursor.bytes[cursor.at] == UInt8(ascii: "{"), case .object(let members)? = cursor.object(depth: 1, keys: keys)
        else { return nil }
        cursor.skipWhitespace()
        return cursor.atEnd ? members : nil
    }

    /// The value of `bytes`, as ``value(_:)-(UnsafeRawBufferPointer)``.
    public static func value(_ bytes: some Collection<UInt8>) -> JSONValue? {
        if let read = bytes.withContiguousStorageIfAvailable({ value(UnsafeRawBufferPointer($0)) }) { return read }
        return Array(bytes).withUnsafeBytes { value($0) }
    }

    private struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        var at = 0

        var atEnd: Bool { at == bytes.count }

        mutating func skipWhitespace() {
            while at < bytes.count {
                switch bytes[at] {
                case 0x20, 0x09, 0x0A, 0x0D: at += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) -> JSONValue? {
            skipWhitespace()
            guard at < bytes.count else { return nil }
            switch bytes[at] {
            case UInt8(ascii: "{"): return depth < depthLimit ? object(depth: depth + 1) : nil
            case UInt8(ascii: "["): return depth < depthLimit ? array(depth: depth + 1) : nil
            case UInt8(ascii: "\""): return string().map(JSONValue.string)
            case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
            case UInt8(ascii: "n"): return literal("null") ? .null : nil
            default: return number()
            }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let n = word.utf8CodeUnitCount
            guard bytes.count - at >= n else { return false }
            for i in 0..<n where bytes[at + i] != word.utf8Start[i] { return false }
            at += n
            return true
        }

        /// An object from its opening brace; with `keys`, only one whose
        /// keys are all among them.
        mutating func object(depth: Int, keys: Set<String>? = nil) -> JSONValue? {
            at += 1
            var members: [String: JSONValue] = [:]
            skipWhitespace()
            if at < bytes.count, bytes[at] == UInt8(ascii: "}") {
                at += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard at < bytes.count, bytes[at] == UInt8(ascii: "\""), let key = string(), keys?.contains(key) ?? true else { return nil }
                skipWhitespace()
                guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { return nil }
                at += 1
                guard let value = value(depth: depth), members.updateValue(value, forKey: key) == nil else { return nil }
                skipWhitespace()
                guard at < bytes.count else { return nil }
                let next = bytes[at]
                at += 1
                if next == UInt8(ascii: "}") { return .object(members) }
                guard next == UInt8(ascii: ",") else { return nil }
            }
        }

        mutating func array(depth: Int) -> JSONValue? {
            at += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if at < bytes.count, bytes[at] == UInt8(ascii: "]") {
                at += 1
                return .array(elements)
            }
            while true {
                guard let element = value(depth: depth) else { return nil }
                elements.append(element)
                skipWhitespace()
                guard at < bytes.count else { return nil }
                let next = bytes[at]
                at += 1
                if next == UInt8(ascii: "]") { return .array(elements) }
                guard next == UInt8(ascii: ",") else { return nil }
            }
        }

        /// A string from its opening quote: the common case (no escape) is
        /// taken as one slice.
        mutating func string() -> String? {
            at += 1
            let start = at
            while at < bytes.count {
                let b = bytes[at]
                if b == UInt8(ascii: "\"") {
                    let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self)
                    at += 1
                    return text
                }
                if b == UInt8(ascii: "\\") { break }
                if b < 0x20 { return nil }
                at += 1
            }
            // With escapes: the raw part so far, then byte by byte.
            var out = Array(bytes[start..<at])
            while at < bytes.count {
                let b = bytes[at]
                at += 1
                switch b {
                case UInt8(ascii: "\""):
                    return String(validating: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard at < bytes.count else { return nil }
                    let e = bytes[at]
                    at += 1
                    switch e {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        guard var scalar = hex4() else { return nil }
                        if (0xD800..<0xDC00).contains(scalar) {
                            // A high surrogate takes the low one that must follow.
                            guard literal("\\u"), let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00..<0xE000).contains(scalar) {
                            return nil
                        }
                        guard let s = Unicode.Scalar(scalar) else { return nil }
                        UTF8.encode(s) { out.append($0) }
                    default: return nil
                    }
                default:
                    if b < 0x20 { return nil }
                    out.append(b)
                }
            }
            return nil
        }

        mutating func hex4() -> UInt32? {
            guard bytes.count - at >= 4 else { return nil }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let b = bytes[at]
                at += 1
                let d: UInt8
                switch b {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = b - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = b - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = b - UInt8(ascii: "A") + 10
                default: return nil
                }
                v = v << 4 | UInt32(d)
            }
            return v
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
        mutating func number() -> JSONValue? {
            let start = at
            func digits() -> Int {
                let from = at
                while at < bytes.count, bytes[at] >= UInt8(ascii: "0"), bytes[at] <= UInt8(ascii: "9") { at += 1 }
                return at - from
            }
            if at < bytes.count, bytes[at] == UInt8(ascii: "-") { at += 1 }
            let intStart = at
            let intDigits = digits()
            guard intDigits > 0, intDigits == 1 || bytes[intStart] != UInt8(ascii: "0") else { return nil }
            var integral = true
            if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
                at += 1
                guard digits() > 0 else { return nil }
                integral = false
            }
            if at < bytes.count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
                at += 1
                if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") { at += 1 }
                guard digits() > 0 else { return nil }
                integral = false
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self)
            if integral, let i = Int(text) { return .int(i) }
            guard let d = Double(text), d.isFinite else { return nil }
            return .double(d)
        }
    }
}
