import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The id a client puts on a request and the daemon echoes on the answer:
/// a JSON string or integer.
public enum RequestID: Codable, Hashable, Sendable, CustomStringConvertible {
    /// An integer id.
    case int(Int64)
    /// A string id.
    case string(String)

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let i = try? c.decode(Int64.self) {
            self = .int(i)
        } else {
            self = .string(try c.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case let .int(i): try c.encode(i)
        case let .string(s): try c.encode(s)
        }
    }

    public var description: String {
        switch self {
        case let .int(i): "\(i)"
        case let .string(s): s
        }
    }
}

/// An error answer: a stable machine-readable `code` and a human `message`.
public struct ControlError: Error, Codable, Equatable, Sendable, CustomStringConvertible {
    /// A stable code, e.g. `unknown-game` (see the static members).
    public var code: String
    /// A sentence for people.
    public var message: String

    /// Creates an error answer.
    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// The line is not a JSON object.
    public static func malformed(_ detail: String) -> ControlError {
        ControlError(code: "malformed-request", message: "malformed request: \(detail)")
    }
    /// The line is longer than ``ControlProtocol/maximumLineLength``.
    public static let lineTooLong = ControlError(
        code: "line-too-long", message: "request line longer than \(ControlProtocol.maximumLineLength) bytes; discarded")
    /// No such command.
    public static func unknownCommand(_ name: String) -> ControlError {
        ControlError(code: "unknown-command", message: "unknown command '\(name)'")
    }
    /// The arguments do not fit the command.
    /// Whether the error says a value in the request was bad (a size, a
    /// name, an address, a cell off the board, an empty game id): the
    /// command line's status 2, as for a bad value it finds itself.
    public var isBadValue: Bool { ["bad-parameters", "bad-arguments", "outside-board"].contains(code) }

    public static func badArguments(_ detail: String) -> ControlError {
        ControlError(code: "bad-arguments", message: "bad arguments: \(detail)")
    }
    /// An argument this version of the protocol names otherwise.
    public static func renamed(_ old: String, to new: String, inVersion version: Int) -> ControlError {
        badArguments(
            "\"\(old)\" is \"\(new)\" since version \(version) of the control protocol (this daemon speaks \(ControlProtocol.version)): update the client")
    }
    /// The caller's uid is not the daemon's.
    public static let permissionDenied = ControlError(
        code: "permission-denied", message: "this daemon serves only its own user")
    /// The daemon has too many control connections open; this one is closed.
    public static func tooManyConnections(limit: Int) -> ControlError {
        ControlError(code: "too-many-connections", message: "the daemon already serves \(limit) control connections; try again later")
    }
    /// Something went wrong inside the daemon.
    public static func `internal`(_ detail: String) -> ControlError {
        ControlError(code: "internal", message: "internal error: \(detail)")
    }
}

/// Constants of the control protocol.
public enum ControlProtocol {
    /// The control protocol's version, as `Docs/control-protocol.md`
    /// describes it: `--version` and `status` report it, and a change in
    /// what a request or answer means gives it a new one.
    public static let version = 3
    /// The longest request line the daemon reads (bytes, newline excluded);
    /// longer lines are discarded with a `line-too-long` answer.
    public static let maximumLineLength = 64 * 1024
    /// The longest answer or event line a client reads: boards up to 500×500
    /// in JSON are a few hundred kilobytes.
    public static let maximumAnswerLength = 16 * 1024 * 1024
}

/// A command of the control protocol, with its argument and result types.
public protocol ControlCommand: Sendable {
    /// The arguments, encoded at the top level of the request object beside `id` and `command`.
    associatedtype Arguments: Codable & Sendable
    /// The `result` object of a successful answer.
    associatedtype Result: Codable & Sendable
    /// The wire name of the command.
    static var name: String { get }
}

/// The first look at a request line: its id and command name.
public struct RequestHead: Decodable, Sendable {
    /// The request id, if given.
    public var id: RequestID?
    /// The command name, if given.
    public var command: String?

    /// The head of a request line from its members as ``JSONLineReader``
    /// read them; nil when the id or the command has a type JSONDecoder is
    /// left to judge (a `null`, a fraction, an object).
    public init?(members: [String: JSONValue]) {
        let id: JSONValue? = members["id"]
        switch id {
        case .none: self.id = nil
        case .some(.int(let i)): self.id = .int(Int64(i))
        case .some(.string(let s)): self.id = .string(s)
        default: return nil
        }
        let command: JSONValue? = members["command"]
        switch command {
        case .none: self.command = nil
        case .some(.string(let s)): self.command = s
        default: return nil
        }
    }
}

/// A request as sent: `{"id":…, "command":"…", …arguments}`.
public struct Request<Arguments: Encodable & Sendable>: Encodable, Sendable {
    /// The request id.
    public var id: RequestID
    /// The command name.
    public var command: String
    /// The arguments, flattened into the same object.
    public var arguments: Arguments

    /// Creates a request.
    public init(id: RequestID, command: String, arguments: Arguments) {
        self.id = id
        self.command = command
        self.arguments = arguments
    }

    private enum Keys: String, CodingKey { case id, command }

    public func encode(to encoder: any Encoder) throws {
        try arguments.encode(to: encoder)
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(id, forKey: .id)
        try c.encode(command, forKey: .command)
    }
}

/// An answer as sent: `{"id":…, "ok":true, "result":{…}}` or `{"id":…, "ok":false, "error":{…}}`.
public struct Answer<Result: Encodable & Sendable>: Encodable, Sendable {
    /// The id of the request answered (null when the request had none or could not be read).
    public var id: RequestID?
    /// The result, on success.
    public var result: Result?
    /// The error, on failure.
    public var error: ControlError?

    /// A successful answer.
    public static func success(_ id: RequestID?, _ result: Result) -> Answer { Answer(id: id, result: result, error: nil) }

    private enum Keys: String, CodingKey { case id, ok, result, error }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        if let id { try c.encode(id, forKey: .id) } else { try c.encodeNil(forKey: .id) }
        if let error {
            try c.encode(false, forKey: .ok)
            try c.encode(error, forKey: .error)
        } else {
            try c.encode(true, forKey: .ok)
            try c.encode(result, forKey: .result)
        }
    }
}

extension Answer where Result == Empty {
    /// A failed answer.
    public static func failure(_ id: RequestID?, _ error: ControlError) -> Answer { Answer(id: id, result: nil, error: error) }
}

/// An empty JSON object, for commands without arguments or results.
public struct Empty: Codable, Sendable, Equatable {
    /// Creates an empty object.
    public init() {}
}

/// The first look at an incoming line on the client side: an answer or an event.
public struct IncomingHead: Decodable, Sendable {
    /// The id of the request answered; absent on events.
    public var id: RequestID?
    /// Whether the answer is a success; absent on events.
    public var ok: Bool?
    /// The error of a failed answer.
    public var error: ControlError?
    /// The event kind, on events.
    public var event: String?
}

/// A decoded successful answer's result.
public struct ResultBox<Result: Decodable & Sendable>: Decodable, Sendable {
    /// The result.
    public var result: Result
}

/// Coders shared by both sides, so dates and keys agree.
public enum ControlCoding {
    /// A JSON encoder for one line: compact, sorted keys, no escaped slashes.
    public static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }

    /// A JSON decoder.
    public static func decoder() -> JSONDecoder { JSONDecoder() }

    /// Encodes a value as one line (a trailing newline included).
    public static func line(_ value: some Encodable) throws -> Data {
        var data = try encoder().encode(value)
        data.append(0x0A)
        return data
    }
}
