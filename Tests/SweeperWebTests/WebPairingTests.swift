import FoundationEssentials
import NIOCore
import NIOEmbedded
import NIOSSL
import Synchronization
import Testing

@testable import SweeperWeb

/// Pairing phones on the home network: one-time codes, guesses limited,
/// devices kept by hash and revoked; the board's own certificate; the
/// hosts and origins the home network's listener answers to.
@Suite struct WebPairingTests {
    final class Kept: WebDeviceKeeper, Sendable {
        let held = Mutex<[WebDevice]>([])
        let writes = Mutex(0)
        func devices() -> [WebDevice] { held.withLock { $0 } }
        func keep(_ devices: [WebDevice]) throws {
            held.withLock { $0 = devices }
            writes.withLock { $0 += 1 }
        }
    }

    final class Clock: Sendable {
        let now = Mutex<Int64>(5_000_000)
        func advance(_ millis: Int64) { now.withLock { $0 += millis } }
        var read: @Sendable () -> Int64 { { self.now.withLock { $0 } } }
    }

    @Test func aCodePairsOneBrowserOnceAndTheDeviceIsKeptByItsHashOnly() throws {
        let kept = Kept()
        let clock = Clock()
        let pairing = WebPairing(keeper: kept, clock: clock.read)
        let (code, expires) = pairing.issueCode()
        #expect(code.count == 9 && code.dropFirst(4).first == "-")
        #expect(expires == 5_000_000 + WebPairing.codeLifetimeMillis)
        // Typed in lower case, with O for 0 and without the dash, it works.
        let typed = code.lowercased().replacing("-", with: "").replacing("0", with: "o")
        let (device, token) = try pairing.pair(code: typed, name: "Chrome on Android")
        #expect(kept.devices() == [device])
        #expect(!kept.devices()[0].tokenHash.contains(token) && kept.devices()[0].tokenHash.count == 64)
        #expect(pairing.device(for: token)?.id == device.id)
        #expect(pairing.device(for: token + "0") == nil)
        #expect(throws: WebPairing.Refusal.badCode) { try pairing.pair(code: code, name: "again") }
        // A code older than five minutes pairs nothing.
        let (late, _) = pairing.issueCode()
        clock.advance(WebPairing.codeLifetimeMillis)
        #expect(throws: WebPairing.Refusal.badCode) { try pairing.pair(code: late, name: "late") }
        // The devices come back after a restart, and the cookie still works.
        let restarted = WebPairing(keeper: kept, clock: clock.read)
        #expect(restarted.device(for: token)?.id == device.id)
        // Revoked, it is forgotten everywhere.
        #expect(try restarted.revoke(String(device.id.prefix(3)).lowercased())?.id == device.id)
        #expect(restarted.device(for: token) == nil)
        #expect(kept.devices().isEmpty)
        #expect(try restarted.revoke("nobody") == nil)
    }

    @Test func aCodeOfAHostedPlayerPairsABrowserToThatPlayerUntilThePlayerGoes() throws {
        let kept = Kept()
        let pairing = WebPairing(keeper: kept, clock: Clock().read)
        let (own, ownToken) = try pairing.pair(code: pairing.issueCode().code, name: "Firefox on Linux")
        let (ann, annToken) = try pairing.pair(code: pairing.issueCode(player: "ANN").code, name: "Chrome on Android")
        let (ben, benToken) = try pairing.pair(code: pairing.issueCode(player: "BEN").code, name: "Safari on iPhone")
        #expect(own.player == nil && ann.player == "ANN" && ben.player == "BEN")
        // The player outlives a restart with the device.
        let restarted = WebPairing(keeper: kept, clock: Clock().read)
        #expect(restarted.device(for: annToken)?.player == "ANN")
        // Ben goes: his devices and the codes made for him, nobody else's.
        let waiting = restarted.issueCode(player: "BEN").code
        let other = restarted.issueCode(player: "ANN").code
        #expect(try restarted.revoke(player: "BEN").map(\.id) == [ben.id])
        #expect(restarted.device(for: benToken) == nil)
        #expect(throws: WebPairing.Refusal.badCode) { try restarted.pair(code: waiting, name: "late") }
        #expect(restarted.device(for: annToken)?.id == ann.id)
        #expect(restarted.device(for: ownToken)?.id == own.id)
        #expect(try restarted.pair(code: other, name: "Ann's tablet").device.player == "ANN")
        #expect(kept.devices().allSatisfy { $0.player != "BEN" })
    }

    @Test func aHostAddingATablesWorthOfPlayersKeepsEveryCodeWorking() throws {
        let pairing = WebPairing(keeper: Kept(), clock: Clock().read)
        let codes = (1...8).map { pairing.issueCode(player: "P\($0)").code }
        for (i, code) in codes.enumerated() {
            #expect((try? pairing.pair(code: code, name: "phone \(i + 1)"))?.device.player == "P\(i + 1)", "the code of player \(i + 1) stopped working")
        }
        // Past the limit, the oldest open code goes first.
        let clock = Clock()
        let later = WebPairing(keeper: Kept(), clock: clock.read)
        let many = (0..<WebPairing.codeLimit + 1).map { _ in
            clock.advance(1)
            return later.issueCode().code
        }
        #expect(throws: WebPairing.Refusal.badCode) { try later.pair(code: many[0], name: "oldest") }
        #expect((try? later.pair(code: many[1], name: "next")) != nil)
    }

    /// A channel as a WebSocket's is: connected, open until closed.
    static func connected() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "192.168.1.20", port: 50_000)).wait()
        return channel
    }

    @Test func limitsCountByAnIPv4AddressOrAnIPv6Slash64() throws {
        #expect(WebClientAddress.key(of: try SocketAddress(ipAddress: "192.168.1.20", port: 5000)) == "192.168.1.20")
        let privacy = try SocketAddress(ipAddress: "2001:db8:1:2:aaaa:bbbb:cccc:dddd", port: 5000)
        let other = try SocketAddress(ipAddress: "2001:db8:1:2:1111:2222:3333:4444", port: 5001)
        #expect(WebClientAddress.key(of: privacy) == WebClientAddress.key(of: other), "one device's addresses in its /64 count apart")
        #expect(WebClientAddress.key(of: privacy) != WebClientAddress.key(of: try SocketAddress(ipAddress: "2001:db8:1:3::1", port: 5000)))
        #expect(WebClientAddress.key(of: try SocketAddress(ipAddress: "::ffff:192.168.1.20", port: 5000)) == "192.168.1.20")
        #expect(WebClientAddress.key(of: nil) == "")
    }

    @Test func guessesAreLimitedEvenForTheRightCode() throws {
        let clock = Clock()
        let pairing = WebPairing(keeper: Kept(), clock: clock.read)
        let (code, _) = pairing.issueCode()
        for _ in 0..<WebPairing.failureLimit {
            #expect(throws: WebPairing.Refusal.badCode) { try pairing.pair(code: "AAAA-AAAA", name: "guess", from: "192.168.1.66") }
        }
        // The right code is refused too while the limit holds: a guesser learns nothing.
        #expect(throws: WebPairing.Refusal.rateLimited(seconds: 60)) { try pairing.pair(code: code, name: "guesser", from: "192.168.1.66") }
        clock.advance(WebPairing.failureWindowMillis)
        #expect(try pairing.pair(code: code, name: "owner", from: "192.168.1.66").device.name == "owner")
        // 2^40 codes at ten guesses a minute: a code's five minutes give 50 guesses.
        #expect(WebPairing.alphabet.count == 32)
    }

    @Test func aGuestGuessingKeepsNobodyElseFromPairingButManyAddressesStopAll() throws {
        let clock = Clock()
        let pairing = WebPairing(keeper: Kept(), clock: clock.read)
        for _ in 0..<WebPairing.failureLimit {
            #expect(throws: WebPairing.Refusal.badCode) { try pairing.pair(code: "AAAA-AAAA", name: "guess", from: "192.168.1.66") }
        }
        #expect(throws: WebPairing.Refusal.rateLimited(seconds: 60)) { try pairing.pair(code: "AAAA-AAAA", name: "guess", from: "192.168.1.66") }
        // The family's phone, at another address, pairs with its code.
        #expect(try pairing.pair(code: pairing.issueCode().code, name: "phone", from: "192.168.1.20").device.name == "phone")
        // Guesses from many addresses together meet the limit of all: every code is refused for a while.
        var address = 100
        while true {
            do {
                _ = try pairing.pair(code: "AAAA-AAAA", name: "guess", from: "192.168.1.\(address)")
            } catch .rateLimited {
                break
            } catch {}
            address += 1
            try #require(address < 100 + WebPairing.failureLimitForAll + 1, "no limit on guesses from many addresses")
        }
        #expect(address - 100 + WebPairing.failureLimit == WebPairing.failureLimitForAll)
        let late = pairing.issueCode().code
        #expect(throws: WebPairing.Refusal.rateLimited(seconds: 60)) { try pairing.pair(code: late, name: "tablet", from: "192.168.1.21") }
        clock.advance(WebPairing.failureWindowMillis)
        #expect(try pairing.pair(code: late, name: "tablet", from: "192.168.1.21").device.name == "tablet")
    }

    @Test func aDeviceLeavingItsWebSocketsClosesThemAndOneWithABoardOpenIsKept() throws {
        let clock = Clock()
        let kept = Kept()
        let pairing = WebPairing(keeper: kept, clock: clock.read)
        var devices: [WebDevice] = []
        for i in 0..<WebPairing.deviceLimit {
            devices.append(try pairing.pair(code: pairing.issueCode().code, name: "device \(i)").device)
            clock.advance(1_000)
        }
        // The oldest two have boards open (their WebSockets ask nothing for days).
        let open = [try Self.connected(), try Self.connected()]
        for (device, channel) in zip(devices, open) { pairing.track(channel, device: device.id) }
        clock.advance(86_400_000)
        // A new device makes room: the least recently used without a board open goes, not those with one.
        _ = try pairing.pair(code: pairing.issueCode().code, name: "new")
        let ids = Set(pairing.devices.map(\.id))
        #expect(ids.contains(devices[0].id) && ids.contains(devices[1].id), "a device with its board open was forgotten")
        #expect(!ids.contains(devices[2].id))
        #expect(open[0].isActive && open[1].isActive)
        // Once every device has a board open, the oldest goes, and its WebSocket closes with it.
        for device in pairing.devices where device.id != devices[0].id && device.id != devices[1].id {
            pairing.track(try Self.connected(), device: device.id)
        }
        _ = try pairing.pair(code: pairing.issueCode().code, name: "newer")
        #expect(!pairing.devices.contains { $0.id == devices[0].id })
        #expect(!open[0].isActive, "the forgotten device's WebSocket is still open")
        #expect(open[1].isActive)
    }

    @Test func aRevokingTheStoreCannotKeepLeavesTheDevicePairedAndItsSocketsClosed() throws {
        struct DiskFull: Error {}
        final class Failing: WebDeviceKeeper, Sendable {
            let fail = Mutex(false)
            let held = Mutex<[WebDevice]>([])
            func devices() -> [WebDevice] { held.withLock { $0 } }
            func keep(_ devices: [WebDevice]) throws {
                if fail.withLock({ $0 }) { throw DiskFull() }
                held.withLock { $0 = devices }
            }
        }
        let keeper = Failing()
        let pairing = WebPairing(keeper: keeper, clock: Clock().read)
        let (device, token) = try pairing.pair(code: pairing.issueCode().code, name: "phone")
        let socket = try Self.connected()
        pairing.track(socket, device: device.id)
        keeper.fail.withLock { $0 = true }
        #expect(throws: DiskFull.self) { try pairing.revoke(device.id) }
        #expect(!socket.isActive, "a WebSocket of a device being revoked stayed open")
        // Still paired, as the store keeps it: a restart brings back nothing its owner was told is gone.
        #expect(pairing.device(for: token)?.id == device.id)
        #expect(keeper.devices().map(\.id) == [device.id])
        keeper.fail.withLock { $0 = false }
        #expect(try pairing.revoke(device.id)?.id == device.id)
        #expect(pairing.device(for: token) == nil && keeper.devices().isEmpty)
        // A WebSocket that comes up after its device was revoked closes at once.
        let late = try Self.connected()
        pairing.track(late, device: device.id)
        #expect(!late.isActive)
    }

    @Test(.enabled(if: access("/usr/bin/openssl", X_OK) == 0, "openssl is not installed"))
    func theCertificateIsMadeOnceAndTLSTakesIt() throws {
        let folder = "/tmp/sweeper-cert-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let made = try WebCertificate.load(folder: folder)
        let again = try WebCertificate.load(folder: folder)
        #expect(made.der == again.der && made.fingerprint == again.fingerprint, "the certificate was made twice")
        #expect(made.fingerprint.split(separator: ":").count == 32)
        let certificate = try NIOSSLCertificate(bytes: made.der, format: .der)
        #expect(try certificate.toDERBytes() == made.der)
        let key = try NIOSSLPrivateKey(bytes: made.keyPEM, format: .pem)
        _ = try NIOSSLContext(configuration: .makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key)))
        var st = stat()
        #expect(stat(folder + "/web-tls-key.pem", &st) == 0 && st.st_mode & 0o077 == 0, "the key is readable by others")
        #expect(throws: WebCertificateError.self) { try WebCertificate.load(folder: folder + "/missing", openssl: "/usr/bin/openssl") }
    }

    @Test func theHomeNetworksListenerAnswersToAddressesAndLocalNamesOnly() {
        let lan = WebOrigin(port: 8392, lan: true)
        for host in ["192.168.1.20:8392", "10.0.0.5:8392", "[fe80::1]:8392", "mums-laptop.local:8392", "127.0.0.1:8392"] {
            #expect(lan.admits(host: host), "\(host)")
        }
        for host in ["evil.example:8392", "192.168.1.20:8391", "192.168.1.20", "1.2.3.999:8392", "x.local.evil.example:8392", ".local:8392"] {
            #expect(!lan.admits(host: host), "\(host)")
        }
        #expect(lan.admits(origin: "https://192.168.1.20:8392", host: "192.168.1.20:8392"))
        // On the scheme's own port, a browser names no port.
        let https = WebOrigin(port: 443, lan: true)
        for host in ["192.168.1.20", "[fe80::1]", "mums-laptop.local", "192.168.1.20:443"] { #expect(https.admits(host: host), "\(host)") }
        #expect(!https.admits(host: "192.168.1.20:8392") && !https.admits(host: "evil.example"))
        #expect(https.admits(origin: "https://192.168.1.20", host: "192.168.1.20"))
        #expect(WebOrigin(port: 80).admits(host: "127.0.0.1") && !WebOrigin(port: 8391).admits(host: "127.0.0.1"))
        #expect(!lan.admits(origin: "http://192.168.1.20:8392", host: "192.168.1.20:8392"), "the home network's origin is https")
        #expect(WebPairing.describe(userAgent: "Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 Chrome/126.0 Mobile Safari/537.36") == "Chrome on Android")
        #expect(WebPairing.describe(userAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0) AppleWebKit Version/17.0 Mobile Safari/604.1") == "Safari on iPhone")
    }
}

#if canImport(Glibc)
import Glibc
#endif
