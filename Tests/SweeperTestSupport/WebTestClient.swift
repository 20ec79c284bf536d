import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A blocking HTTP/1.1 and WebSocket client for 127.0.0.1, for what a
/// browser would never send (another `Host`, another `Origin`, no cookie),
/// for checking the web board's answers byte by byte, and for speaking
/// WebDriver to chromedriver. Reads give up after `timeout` seconds of silence.
public final class WebTestClient {
    /// An HTTP response: its status, headers (names lower-cased) and body.
    public struct Response {
        public var status: Int
        public var headers: [String: String]
        public var body: String
    }

    private let fd: Int32
    private var pending: [UInt8] = []

    /// Connects to 127.0.0.1:`port`.
    public init(port: Int, timeout: Int = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ProcessError("socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            close(fd)
            throw ProcessError("connect 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
        }
        var timeout = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// The port of an `http://127.0.0.1:PORT/…` address.
    public static func port(of url: String) -> Int? {
        guard let rest = url.split(separator: "//").dropFirst().first, let hostPort = rest.split(separator: "/").first else { return nil }
        return hostPort.split(separator: ":").last.flatMap { Int($0) }
    }

    /// The path and query of an `http://host/…` address.
    public static func target(of url: String) -> String {
        guard let rest = url.split(separator: "//", maxSplits: 1).dropFirst().first, let slash = rest.firstIndex(of: "/") else { return "/" }
        return String(rest[slash...])
    }

    /// Sends a request with these header lines (`Host` first unless given).
    public func request(_ method: String = "GET", _ target: String, headers: [(String, String)], body: [UInt8] = []) throws -> Response {
        var text = "\(method) \(target) HTTP/1.1\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { text += "Content-Length: \(body.count)\r\n" }
        text += "\r\n"
        try send(Array(text.utf8) + body)
        return try readResponse()
    }

    /// Sends a WebSocket handshake; the response (101 when accepted).
    public func upgrade(host: String, origin: String?, cookie: String?) throws -> Response {
        var headers = [
            ("Host", host), ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
            ("Sec-WebSocket-Version", "13"),
        ]
        if let origin { headers.append(("Origin", origin)) }
        if let cookie { headers.append(("Cookie", cookie)) }
        return try request("GET", "/ws", headers: headers)
    }

    /// Sends one masked WebSocket text message.
    public func sendText(_ text: String) throws {
        try sendFrame(opcode: 0x1, Array(text.utf8))
    }

    /// Sends one masked frame.
    public func sendFrame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true) throws {
        var frame: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65_536 {
            frame.append(0x80 | 126)
            frame += [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((UInt64(payload.count) >> UInt64(shift)) & 0xFF)) }
        }
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try send(frame)
    }

    /// The next WebSocket message from the server: its opcode and payload
    /// (nil when the connection closed).
    public func readFrame() throws -> (opcode: UInt8, payload: [UInt8])? {
        guard let head = try read(2) else { return nil }
        var length = Int(head[1] & 0x7F)
        if length == 126 {
            guard let b = try read(2) else { return nil }
            length = Int(b[0]) << 8 | Int(b[1])
        } else if length == 127 {
            guard let b = try read(8) else { return nil }
            length = b.reduce(0) { $0 << 8 | Int($1) }
        }
        guard let payload = try read(length) else { return nil }
        return (head[0] & 0x0F, payload)
    }

    /// The next text message as a JSON object.
    public func readJSON() throws -> [String: Any]? {
        while let frame = try readFrame() {
            guard frame.opcode == 0x1 else { return nil }
            return try JSONSerialization.jsonObject(with: Data(frame.payload)) as? [String: Any]
        }
        return nil
    }

    private func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw ProcessError("send: \(String(cString: strerror(errno)))") }
            offset += n
        }
    }

    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { throw ProcessError("no answer in time") }
        guard n > 0 else { return false }
        pending += chunk[0..<n]
        return true
    }

    private func read(_ count: Int) throws -> [UInt8]? {
        while pending.count < count { guard try fill() else { return nil } }
        defer { pending.removeFirst(count) }
        return Array(pending[0..<count])
    }

    private func readResponse() throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        var end: Int?
        while end == nil {
            if pending.count >= 4 {
                end = (0...(pending.count - 4)).first { Array(pending[$0..<($0 + 4)]) == separator }
            }
            if end == nil { guard try fill() else { throw ProcessError("closed before a response") } }
        }
        let headEnd = end ?? 0
        let head = String(decoding: pending[0..<headEnd], as: UTF8.self)
        pending.removeFirst(headEnd + 4)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") ?? 0
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        let body = status == 101 ? [] : (try read(length) ?? [])
        return Response(status: status, headers: headers, body: String(decoding: body, as: UTF8.self))
    }
}

/// A TCP socket bound to a free port of 127.0.0.1 (listening, when asked):
/// its descriptor, to close, and its port.
public func loopbackSocket(listening: Bool) throws -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let ok = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard fd >= 0, ok, !listening || listen(fd, 1) == 0 else {
        let failure = errno
        if fd >= 0 { close(fd) }
        throw ProcessError("no loopback port: \(String(cString: strerror(failure)))")
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}
