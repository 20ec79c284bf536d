import FoundationEssentials
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

    @Test func guessesAreLimitedEvenForTheRightCode() throws {
        let clock = Clock()
        let pairing = WebPairing(keeper: Kept(), clock: clock.read)
        let (code, _) = pairing.issueCode()
        for _ in 0..<WebPairing.failureLimit {
            #expect(throws: WebPairing.Refusal.badCode) { try pairing.pair(code: "AAAA-AAAA", name: "guess") }
        }
        // The right code is refused too while the limit holds: a guesser learns nothing.
        #expect(throws: WebPairing.Refusal.rateLimited(seconds: 60)) { try pairing.pair(code: code, name: "owner") }
        clock.advance(WebPairing.failureWindowMillis)
        #expect(try pairing.pair(code: code, name: "owner").device.name == "owner")
        // 2^40 codes at ten guesses a minute: a code's five minutes give 50 guesses.
        #expect(WebPairing.alphabet.count == 32)
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
        #expect(!lan.admits(origin: "http://192.168.1.20:8392", host: "192.168.1.20:8392"), "the home network's origin is https")
        #expect(WebPairing.describe(userAgent: "Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 Chrome/126.0 Mobile Safari/537.36") == "Chrome on Android")
        #expect(WebPairing.describe(userAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0) AppleWebKit Version/17.0 Mobile Safari/604.1") == "Safari on iPhone")
    }
}

#if canImport(Glibc)
import Glibc
#endif
