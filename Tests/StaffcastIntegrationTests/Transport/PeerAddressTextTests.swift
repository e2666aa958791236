import CStaffcastSocket
import Foundation
import XCTest

/// `sc_format_ipv4` (the accept path's own IPv4 formatting) writes what inet_ntop writes.
final class PeerAddressTextTests: XCTestCase {
    func testIPv4TextIsInetNtops() {
        var addresses: [UInt32] = [0, 0xFFFF_FFFF, 0x7F00_0001, 0x0A00_6409, 0x0116_8504, 0xC0A8_0A63, 0x6400_0A00]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 { addresses.append(UInt32.random(in: .min ... .max, using: &generator)) }
        for host in addresses {
            let network = host.bigEndian
            var ours = [CChar](repeating: 1, count: 16)
            sc_format_ipv4(network, &ours)
            var theirs = [CChar](repeating: 0, count: 16)
            var address = in_addr(s_addr: network)
            XCTAssertNotNil(inet_ntop(AF_INET, &address, &theirs, 16))
            XCTAssertEqual(String(cString: ours), String(cString: theirs), "address \(host)")
        }
    }
}
