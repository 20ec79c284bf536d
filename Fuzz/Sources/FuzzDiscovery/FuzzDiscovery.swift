// What mDNS brings in from anyone on the network: TXT record strings (as
// avahi hands them over), then the resolved record turned into a peer
// sighting (peer id, name, circle tag, addresses with link-local scopes).
import FuzzSupport
import SweeperCrypto
import SweeperNet

@testable import SweeperDaemon
@testable import SweeperDiscovery

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDiscovery(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let name = String(decoding: input.chunk(), as: UTF8.self)
    let host = String(decoding: input.chunk(), as: UTF8.self)
    let port = input.uint16()
    var txt: [String: String] = [:]
    for _ in 0..<(input.byte() % 8) {
        if let (key, value) = ServiceRecord.txtEntry(input.chunk()) { txt[key] = value }
    }
    var addresses: [ResolvedAddress] = []
    for _ in 0..<(input.byte() % 4) {
        let flags = input.byte()
        let ip = String(decoding: input.chunk(), as: UTF8.self)
        addresses.append(ResolvedAddress(ip: ip, isIPv6: flags & 1 != 0, interfaceIndex: Int32(flags >> 1) - 8))
    }
    let record = ServiceRecord(instanceName: name, hostName: host, addresses: addresses, port: port, txt: txt)
    if case .success(let sighting) = DiscoveryService.sighting(record) {
        for a in sighting.addresses { check(a.port == Int(port), "a sighted address lost its port") }
        _ = sighting.addresses.map { $0.hostPortText }
    }
    return 0
}

@_cdecl("FuzzDiscovery_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    writeSeedsIfAsked {
        func text(_ s: String) -> [UInt8] { chunk(Array(s.utf8)) }
        let id = Fixtures.players[1].peerID.description
        let port: [UInt8] = [0x1F, 0x1D]  // 7455, little-endian as FuzzInput reads it
        return [
            text("bob's sweeper") + text("bob.local") + port + [3] + text("id=\(id)") + text("name=bob") + text("circle=\(Fixtures.circle.tag)")
                + [2, 0] + text("192.168.1.20") + [1 | 5 << 1] + text("fe80::1"),
            text("x") + text("x.local") + port + [1] + text("id=\(id)") + [1, 1 | 9 << 1] + text("2001:db8::7"),
        ]
    }
    return runFuzzer(argc, argv, fuzzDiscovery)
}
