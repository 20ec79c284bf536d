import ArgumentParser
import FoundationEssentials
import SweeperControl

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Values the shell completions offer that only the daemon knows: the ids
/// of its games. Asked in a blocking call of at most half a second, so a
/// daemon that is away costs a completion nothing but the wait.
enum GameIDCompletion {
    /// The ids of the daemon's games, newest first; empty when no daemon
    /// answers. `words` is the command line being completed: a `--socket`
    /// in it is the daemon asked, else the default socket.
    static func ids(words: [String]) -> [String] {
        var socket = ControlClient.defaultSocketPath()
        if let i = words.firstIndex(of: "--socket"), i + 1 < words.count { socket = words[i + 1] }
        guard let answer = request(#"{"id":1,"command":"games"}"#, socket: socket),
            let reply = try? JSONDecoder().decode(GamesReply.self, from: answer)
        else { return [] }
        return reply.result.games.map(\.game)
    }

    /// The part of a `games` answer that completion reads.
    private struct GamesReply: Decodable {
        struct Result: Decodable { var games: [Game] }
        struct Game: Decodable { var game: String }
        var result: Result
    }

    /// One request line on a fresh connection, answered within `timeout` seconds.
    private static func request(_ line: String, socket path: String, timeout: Int = 500_000) -> Data? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var limit = timeval(tv_sec: 0, tv_usec: timeout)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        // As every client does: nothing goes to a socket another user's process serves.
        guard connected == 0, PeerCredentials.of(descriptor: fd)?.uid == getuid() else { return nil }
        let request = Array((line + "\n").utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else { return nil }
        var answer = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !answer.contains(0x0A), answer.count < ControlProtocol.maximumAnswerLength {
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { return nil }
            answer.append(contentsOf: buffer[0..<n])
        }
        return answer.split(separator: 0x0A).first.map { Data($0) }
    }
}

/// The marks `flag --mark` sets.
enum MarkChoice: String, CaseIterable, ExpressibleByArgument {
    case flag, question, none
}

/// `--colour` values: the profile colours (`PlayerColours`), or `auto`.
enum ColourChoice: String, CaseIterable, ExpressibleByArgument {
    case auto, blue, green, magenta, cyan, red, yellow
    case lightBlue = "light-blue"
    case pink
}
