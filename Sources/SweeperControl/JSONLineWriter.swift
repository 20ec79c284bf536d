/// Writes JSON objects into bytes: keys and values in the order given,
/// commas placed by itself. The hot control lines (``ControlEvent/jsonLine()``,
/// ``ControlClient/setCursor(_:)``) are written with it: keys in sorted order
/// and strings escaped as ``ControlCoding/line(_:)`` writes them.
struct JSONLineWriter {
    var bytes: [UInt8] = []
    /// Whether the object being written has no member yet, per open object.
    private var empty: [Bool] = []

    private static let hex = Array("0123456789abcdef".utf8)

    init() { bytes.reserveCapacity(256) }

    mutating func byte(_ b: UInt8) { bytes.append(b) }

    mutating func ascii(_ s: String) { bytes.append(contentsOf: s.utf8) }

    mutating func begin() {
        bytes.append(UInt8(ascii: "{"))
        empty.append(true)
    }

    mutating func end() {
        bytes.append(UInt8(ascii: "}"))
        empty.removeLast()
    }

    mutating func key(_ k: StaticString) {
        if empty.last == false { bytes.append(UInt8(ascii: ",")) }
        if !empty.isEmpty { empty[empty.count - 1] = false }
        bytes.append(UInt8(ascii: "\""))
        k.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func int(_ v: Int) { ascii(String(v)) }

    /// A request id: a number or a string.
    mutating func id(_ id: RequestID) {
        switch id {
        case .int(let i): ascii(String(i))
        case .string(let s): string(s)
        }
    }

    /// A string with JSON's escapes: quote, backslash and control characters.
    mutating func string(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                bytes.append(contentsOf: [
                    UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), Self.hex[Int(b >> 4)], Self.hex[Int(b & 0xF)],
                ])
            default: bytes.append(b)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
