// The web board's requests as a browser, or anyone on the home network,
// sends them: the request line's method and target, `Host`, `Cookie` and
// `User-Agent`, on loopback and on the home network, then the same bytes as
// a WebSocket request line. Nobody here holds a session, a login secret or
// a pairing code, so nothing may be served but the way in.
import FoundationEssentials
import FuzzSupport
import NIOHTTP1
import SweeperControl
import Synchronization

@testable import SweeperWeb

final class NoDevices: WebDeviceKeeper, Sendable {
    let kept = Mutex<[WebDevice]>([])
    func devices() -> [WebDevice] { kept.withLock { $0 } }
    func keep(_ devices: [WebDevice]) throws { kept.withLock { $0 = devices } }
}

// A login and a pairing code exist, as they would while a player pairs; the input cannot know them.
let access: WebAccess = {
    let access = WebAccess()
    _ = access.issueLogin(game: "00112233445566778899aabbccddeeff")
    return access
}()
let pairing: WebPairing = {
    let pairing = WebPairing(keeper: NoDevices())
    _ = pairing.issueCode()
    return pairing
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWeb(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = FuzzInput(data, size).bytes
    guard let first = bytes.first else { return 0 }
    let fields = bytes.dropFirst().split(separator: 0, maxSplits: 4, omittingEmptySubsequences: false).map {
        String(decoding: $0, as: UTF8.self)
    }
    func field(_ i: Int) -> String? { i < fields.count ? fields[i] : nil }
    let methods: [HTTPMethod] = [.GET, .HEAD, .POST, .PUT, .OPTIONS]
    let lan = first & 1 == 1
    let rules = WebRules(origin: WebOrigin(port: 8392, lan: lan), access: access, pairing: pairing, fingerprint: "AA:BB")
    let response = WebHTTPHandler.response(
        to: methods[Int(first >> 1) % methods.count], uri: field(0) ?? "/", host: field(1), cookie: field(2), userAgent: field(3),
        rules: rules)
    check(![.ok, .seeOther].contains(response.status), "a request with no session, secret or code was served: \(response.status)")
    check(rules.session(cookie: field(2)) == nil, "a made-up cookie was a session")
    _ = WebOrigin(port: 8392, lan: lan).admits(origin: field(4), host: field(1))
    _ = WebPairing.canonical(field(0) ?? "")
    _ = WebPairing.describe(userAgent: field(3))
    // The same bytes as a request line on the board's WebSocket.
    if let refusal = WebSocketBridge.refusal(of: Data(bytes)) {
        check(refusal.last == 0x0A, "a refusal that is not one line")
    }
    return 0
}

@_cdecl("FuzzWeb_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    writeSeedsIfAsked {
        [
            [0] + Array("/?key=00\u{0}127.0.0.1:8392\u{0}sweeper-session=ab\u{0}Mozilla/5.0 (X11; Linux) Chrome/156\u{0}http://127.0.0.1:8392".utf8),
            [1] + Array("/?pair=ABCD-EFGH\u{0}192.168.1.20:8392\u{0}\u{0}Mozilla/5.0 (Linux; Android 14) Chrome/126\u{0}https://192.168.1.20:8392".utf8),
            [1] + Array("/ws\u{0}mums-laptop.local:8392\u{0}sweeper-device=00; a=b\u{0}\u{0}https://evil.example".utf8),
            [2] + Array("/app.js?game=1&key=&pair\u{0}[::1]:8392\u{0}".utf8),
            Array(#"{"id": 3, "command": "invite"}"#.utf8),
        ]
    }
    return runFuzzer(argc, argv, fuzzWeb)
}
