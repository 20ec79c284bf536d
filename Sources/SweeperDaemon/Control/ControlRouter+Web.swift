import FoundationEssentials
import SweeperControl
import SweeperWeb

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ControlRouter {
    /// Answers the web board's commands: a login address, the home
    /// network on or off, pairing, and the paired browsers.
    func webCommand(_ command: String, _ id: RequestID?, _ line: Data) async throws -> ControlReply {
        switch command {
        case Commands.Web.name:
            let a: Commands.Web.Arguments = try args(line)
            var game: String?
            if let named = a.game { game = try await service.resolve(named).description }
            switch web.current {
            case .starting: throw ControlError.webUnavailable("it is starting; try again in a moment")
            case let .unavailable(why): throw ControlError.webUnavailable(why)
            case .serving, .off: break
            }
            var player: String?
            if let named = a.player {
                guard let found = hosted.player(named: named) else { throw ControlError.unknownPlayer(named) }
                player = found.id.description
            }
            guard let login = web.login(game: game, player: player) else { throw ControlError.webUnavailable("it stopped") }
            return try answer(id, Commands.Web.Result(url: login.url, address: login.address, expiresAt: login.expiresMillis))
        case Commands.WebLAN.name:
            let a: Commands.WebLAN.Arguments = try args(line)
            if let enabled = a.enabled {
                try webDevices.setLAN(enabled)
                do {
                    try await web.serveLAN(enabled)
                } catch {
                    logger.error("the web board is not served to the home network", metadata: ["error": "\(error)"])
                }
            }
            return try answer(id, lanResult())
        case Commands.WebPair.name:
            guard case let .serving(port) = web.lan, let fingerprint = web.fingerprint else {
                throw ControlError.webUnavailable("it is not served to the home network: run `sweeper web --lan` first")
            }
            let (code, expires) = web.pairing.issueCode()
            let urls = Self.lanAddresses().map { "https://\($0):\(port)/?pair=\(code)" }
            return try answer(id, Commands.WebPair.Result(code: code, urls: urls, fingerprint: fingerprint, expiresAt: expires))
        case Commands.WebDevices.name:
            return try answer(id, Commands.WebDevices.Result(devices: web.pairing.devices.map(Self.info)))
        default:
            let a: Commands.WebRevoke.Arguments = try args(line)
            guard let revoked = try web.pairing.revoke(a.device) else { throw ControlError.unknownWebDevice(a.device) }
            return try answer(id, Self.info(revoked))
        }
    }

    private func lanResult() -> Commands.WebLAN.Result {
        switch web.lan {
        case let .serving(port):
            return .init(
                enabled: true, port: port, addresses: Self.lanAddresses().map { "https://\($0):\(port)/" }, fingerprint: web.fingerprint,
                problem: nil)
        case let .unavailable(why):
            return .init(enabled: false, port: nil, addresses: [], fingerprint: web.fingerprint, problem: why)
        case .off, .starting:
            return .init(enabled: false, port: nil, addresses: [], fingerprint: web.fingerprint, problem: nil)
        }
    }

    static func info(_ device: WebDevice) -> WebDeviceInfo {
        WebDeviceInfo(device: device.id, name: device.name, pairedAt: device.pairedMillis, lastUsedAt: device.lastUsedMillis)
    }

    /// This computer's IPv4 addresses on its networks, loopback and
    /// link-local ones aside.
    static func lanAddresses() -> [String] {
        InterfaceAddresses.current().filter { !$0.contains(":") }
    }
}
