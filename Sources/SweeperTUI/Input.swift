/// A key the viewer understands.
public enum Key: Equatable, Sendable {
    /// A printable character (space included).
    case character(Character)
    /// Control plus a letter (`ctrl("c")` is byte 3).
    case control(Character)
    /// Alt (meta) plus a character: escape followed by it.
    case alt(Character)
    /// An arrow key.
    case up, down, left, right
    /// An editing or paging key.
    case home, end, pageUp, pageDown, insert, delete
    /// Enter (CR or LF), Tab (and Shift-Tab), Backspace (DEL or BS), a lone Escape.
    case enter, tab, backspace, escape
    /// A function key, F1 to F12.
    case function(Int)
}

/// A mouse button in an SGR report.
public enum MouseButton: Equatable, Sendable {
    /// A button.
    case left, middle, right
    /// The wheel.
    case wheelUp, wheelDown
    /// Movement with no button, or a button the viewer ignores.
    case other(Int)
}

/// One SGR (mode 1006) mouse report.
public struct MouseEvent: Equatable, Sendable {
    /// The button.
    public var button: MouseButton
    /// The column, from 1 (SGR reports are 1-based and unbounded, so they work past column 223).
    public var column: Int
    /// The row, from 1.
    public var row: Int
    /// Whether this is a press (`M`) rather than a release (`m`).
    public var pressed: Bool
    /// Whether the pointer moved with a button held.
    public var motion: Bool

    /// Creates a mouse report.
    public init(button: MouseButton, column: Int, row: Int, pressed: Bool, motion: Bool = false) {
        self.button = button
        self.column = column
        self.row = row
        self.pressed = pressed
        self.motion = motion
    }
}

/// What the terminal sent, decoded.
public enum InputEvent: Equatable, Sendable {
    /// A key press.
    case key(Key)
    /// A mouse report.
    case mouse(MouseEvent)
}

/// Turns the bytes a terminal sends into keys and mouse reports. Bytes may
/// arrive split anywhere (a sequence across two reads is kept until it is
/// complete); malformed or overlong sequences are dropped, never trapped on.
public struct InputDecoder: Sendable {
    private var pending: [UInt8] = []

    /// The longest escape sequence kept while waiting for its end.
    public static let maximumSequenceLength = 64

    /// Creates a decoder.
    public init() {}

    /// Whether bytes are held waiting for the rest of a sequence. A reader
    /// that sees no more input for a moment calls ``flush()``: a lone escape
    /// is then the Escape key.
    public var hasPending: Bool { !pending.isEmpty }

    /// Decodes `bytes` after whatever was pending.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [InputEvent] {
        pending.append(contentsOf: bytes)
        var events: [InputEvent] = []
        var i = 0
        while i < pending.count {
            switch decodeOne(at: i) {
            case let .event(event, length):
                if let event { events.append(event) }
                i += length
            case .incomplete:
                if pending.count - i > Self.maximumSequenceLength {
                    // A sequence that never ends: drop it.
                    pending.removeAll(keepingCapacity: true)
                    return events
                }
                pending.removeFirst(i)
                return events
            }
        }
        pending.removeAll(keepingCapacity: true)
        return events
    }

    /// Ends waiting: pending bytes are decoded as if no more would come
    /// (a lone escape is Escape; escape plus a character is Alt).
    public mutating func flush() -> [InputEvent] {
        guard !pending.isEmpty else { return [] }
        let bytes = pending
        pending.removeAll()
        if bytes == [0x1B] { return [.key(.escape)] }
        if bytes.count == 2, bytes[0] == 0x1B, bytes[1] == UInt8(ascii: "[") { return [.key(.alt("["))] }
        if bytes.count == 2, bytes[0] == 0x1B, bytes[1] == UInt8(ascii: "O") { return [.key(.alt("O"))] }
        // An unfinished sequence or character: drop it rather than guess.
        return []
    }

    private enum Step {
        case event(InputEvent?, length: Int)
        case incomplete
    }

    private func decodeOne(at i: Int) -> Step {
        let b = pending[i]
        switch b {
        case 0x1B:
            return decodeEscape(at: i)
        case 0x0D, 0x0A:
            return .event(.key(.enter), length: 1)
        case 0x09:
            return .event(.key(.tab), length: 1)
        case 0x7F, 0x08:
            return .event(.key(.backspace), length: 1)
        case 0x00:
            return .event(.key(.control(" ")), length: 1)
        case 0x01...0x1A:
            return .event(.key(.control(Character(Unicode.Scalar(b + 0x60)))), length: 1)
        case 0x1C...0x1F:
            return .event(nil, length: 1)
        case 0x20...0x7E:
            return .event(.key(.character(Character(Unicode.Scalar(b)))), length: 1)
        default:
            return decodeUTF8(at: i)
        }
    }

    private func decodeUTF8(at i: Int) -> Step {
        let b = pending[i]
        let length: Int
        switch b {
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return .event(nil, length: 1)  // a stray continuation or invalid byte
        }
        guard pending.count - i >= length else {
            // Wait for the rest unless what is there already cannot continue.
            for j in (i + 1)..<pending.count where pending[j] & 0xC0 != 0x80 { return .event(nil, length: 1) }
            return .incomplete
        }
        let slice = Array(pending[i..<(i + length)])
        for c in slice.dropFirst() where c & 0xC0 != 0x80 { return .event(nil, length: 1) }
        var decoder = UTF8()
        var iterator = slice.makeIterator()
        if case let .scalarValue(scalar) = decoder.decode(&iterator) {
            return .event(.key(.character(Character(scalar))), length: length)
        }
        return .event(nil, length: length)
    }

    private func decodeEscape(at i: Int) -> Step {
        guard i + 1 < pending.count else { return .incomplete }
        let next = pending[i + 1]
        switch next {
        case UInt8(ascii: "["):
            return decodeCSI(at: i)
        case UInt8(ascii: "O"):
            guard i + 2 < pending.count else { return .incomplete }
            let key: Key? =
                switch pending[i + 2] {
                case UInt8(ascii: "A"): .up
                case UInt8(ascii: "B"): .down
                case UInt8(ascii: "C"): .right
                case UInt8(ascii: "D"): .left
                case UInt8(ascii: "H"): .home
                case UInt8(ascii: "F"): .end
                case UInt8(ascii: "M"): .enter
                case UInt8(ascii: "P"): .function(1)
                case UInt8(ascii: "Q"): .function(2)
                case UInt8(ascii: "R"): .function(3)
                case UInt8(ascii: "S"): .function(4)
                default: nil
                }
            return .event(key.map { .key($0) }, length: 3)
        case 0x1B:
            // Escape pressed twice: the first is a key of its own.
            return .event(.key(.escape), length: 1)
        case 0x20...0x7E:
            return .event(.key(.alt(Character(Unicode.Scalar(next)))), length: 2)
        default:
            return .event(.key(.escape), length: 1)
        }
    }

    /// `ESC [ params intermediates final`, with SGR mouse `ESC [ < b ; x ; y M|m`.
    private func decodeCSI(at i: Int) -> Step {
        var j = i + 2
        while j < pending.count {
            let c = pending[j]
            if c >= 0x40 && c <= 0x7E { break }  // final byte
            if c < 0x20 || c > 0x3F {
                // Not part of a CSI: drop what we have, keep the odd byte.
                return .event(nil, length: j - i)
            }
            j += 1
        }
        guard j < pending.count else { return .incomplete }
        let final = pending[j]
        let body = pending[(i + 2)..<j]
        let length = j - i + 1
        if body.first == UInt8(ascii: "<") {
            guard final == UInt8(ascii: "M") || final == UInt8(ascii: "m") else { return .event(nil, length: length) }
            let numbers = Self.parameters(body.dropFirst())
            guard numbers.count == 3, let code = numbers[0], let column = numbers[1], let row = numbers[2] else {
                return .event(nil, length: length)
            }
            return .event(.mouse(Self.mouse(code: code, column: column, row: row, pressed: final == UInt8(ascii: "M"))), length: length)
        }
        let numbers = Self.parameters(body)
        let key: Key?
        switch final {
        case UInt8(ascii: "A"): key = .up
        case UInt8(ascii: "B"): key = .down
        case UInt8(ascii: "C"): key = .right
        case UInt8(ascii: "D"): key = .left
        case UInt8(ascii: "H"): key = .home
        case UInt8(ascii: "F"): key = .end
        case UInt8(ascii: "Z"): key = .tab
        case UInt8(ascii: "~"):
            switch numbers.first ?? nil {
            case 1, 7: key = .home
            case 2: key = .insert
            case 3: key = .delete
            case 4, 8: key = .end
            case 5: key = .pageUp
            case 6: key = .pageDown
            case 11, 12, 13, 14, 15: key = .function((numbers.first.flatMap { $0 } ?? 11) - 10)
            case 17, 18, 19, 20, 21: key = .function((numbers.first.flatMap { $0 } ?? 17) - 11)
            case 23, 24: key = .function((numbers.first.flatMap { $0 } ?? 23) - 12)
            default: key = nil
            }
        default: key = nil
        }
        return .event(key.map { .key($0) }, length: length)
    }

    /// `1;2;3` into numbers; an empty or unreadable field is nil. Values are capped so no input overflows.
    private static func parameters(_ bytes: ArraySlice<UInt8>) -> [Int?] {
        bytes.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false).map { field in
            guard !field.isEmpty, field.count <= 9, field.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return field.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        }
    }

    private static func mouse(code: Int, column: Int, row: Int, pressed: Bool) -> MouseEvent {
        let motion = code & 32 != 0
        let base = code & ~(4 | 8 | 16 | 32)  // without shift, meta, control, motion
        let button: MouseButton =
            switch base {
            case 0: .left
            case 1: .middle
            case 2: .right
            case 64: .wheelUp
            case 65: .wheelDown
            default: .other(code)
            }
        return MouseEvent(button: button, column: column, row: row, pressed: pressed, motion: motion)
    }
}
