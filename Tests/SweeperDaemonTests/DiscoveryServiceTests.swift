import SweeperCrypto
import Testing

@testable import SweeperDaemon
@testable import SweeperDiscovery

/// Which mDNS records become daemons to dial.
@Suite struct DiscoveryServiceTests {
    func record(_ txt: [String: String]) -> ServiceRecord {
        ServiceRecord(
            instanceName: "ann on h1", hostName: "h1.local",
            addresses: [ResolvedAddress(ip: "198.18.0.1", isIPv6: false, interfaceIndex: 2)], port: 7455, txt: txt)
    }

    @Test func aRecordNeedsAVersionAndAPeerID() {
        let id = SigningIdentity().peerID.description
        #expect(DiscoveryService.sighting(record(["id": id, "circle": "c"])) == .failure(.noVersion))
        #expect(DiscoveryService.sighting(record(["v": "two", "id": id])) == .failure(.noVersion))
        #expect(DiscoveryService.sighting(record(["v": "2", "id": "not an id"])) == .failure(.noPeerID))
        // A later version is dialled all the same.
        guard case .success(let later) = DiscoveryService.sighting(record(["v": "9", "id": id, "name": "ann", "circle": "c"])) else {
            Issue.record("a record of a later version was refused")
            return
        }
        #expect(later.name == "ann" && later.circleTag == "c" && later.addresses.map(\.hostPortText) == ["198.18.0.1:7455"])
    }

    @Test func aLinkLocalAddressWithoutItsInterfaceIsSkipped() throws {
        let id = SigningIdentity().peerID.description
        let r = ServiceRecord(
            instanceName: "ann on h1", hostName: "h1.local",
            addresses: [
                ResolvedAddress(ip: "fe80::1", isIPv6: true, interfaceIndex: 0),
                ResolvedAddress(ip: "fe80::2", isIPv6: true, interfaceIndex: 3),
            ],
            port: 7455, txt: ["v": "2", "id": id])
        guard case .success(let s) = DiscoveryService.sighting(r) else {
            Issue.record("refused")
            return
        }
        #expect(s.addresses.count == 1)
    }
}
