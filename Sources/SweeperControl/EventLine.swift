import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ControlEvent {
    /// The event as one JSON line (a trailing newline included), as
    /// ``ControlCoding/line(_:)`` writes it: keys sorted, absent fields left
    /// out, slashes unescaped.
    ///
    /// A `cells` event, the one every move sends to every viewer, is written
    /// directly into bytes, several times faster than `JSONEncoder`; other
    /// events (a race's `cells` with its racer's standing, and a progress
    /// that is not a finite number) go through
    /// `JSONEncoder`. Both give the same value when decoded, which the
    /// control protocol's tests check on many events.
    public func jsonLine() throws -> Data {
        guard event == .cells, summary == nil, peer == nil, racer == nil, progress?.isFinite ?? true else {
            return try ControlCoding.line(self)
        }
        var out = JSONLineWriter()
        out.begin()
        if let by { out.key("by"); out.string(by) }
        if let cells {
            out.key("cells")
            out.byte(UInt8(ascii: "["))
            for (i, c) in cells.enumerated() {
                if i > 0 { out.byte(UInt8(ascii: ",")) }
                out.begin()
                out.key("value"); out.string(c.value)
                out.key("x"); out.int(c.x)
                out.key("y"); out.int(c.y)
                out.end()
            }
            out.byte(UInt8(ascii: "]"))
        }
        out.key("event"); out.string(event.rawValue)
        if let game { out.key("game"); out.string(game) }
        if let minesLeft { out.key("minesLeft"); out.int(minesLeft) }
        if let progress { out.key("progress"); out.ascii(progress.description) }
        if let status { out.key("status"); out.string(status.rawValue) }
        if let trippedBy { out.key("trippedBy"); out.string(trippedBy) }
        if let x { out.key("x"); out.int(x) }
        if let y { out.key("y"); out.int(y) }
        out.end()
        out.byte(0x0A)
        return Data(out.bytes)
    }
}

/// Writes JSON objects into bytes: keys and values in the order given,
/// commas placed by itself.
private struct JSONLineWriter {
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
