import StaffcastCore
import XCTest

/// Which push endpoint hosts are refused: by spelling, then by the addresses they resolve to.
final class DeliveryHostRuleTests: XCTestCase {
    func testIPLiteralsAndLocalhostAreRefusedByTheirSpelling() {
        for host in ["127.0.0.1", "127.0.1.7", "8.8.8.8", "127.1", "2130706433", "0x7f.0.0.1", "::1", "[::1]", "[fe80::1]",
                     "localhost", "LOCALHOST.", "push.localhost", ""] {
            XCTAssertNotNil(DeliveryHostRule.refusal(host: host), host)
        }
        for host in ["fcm.googleapis.com", "updates.push.services.mozilla.com", "web.push.apple.com", "1password.example"] {
            XCTAssertNil(DeliveryHostRule.refusal(host: host), host)
        }
    }

    func testPrivateLoopbackAndLinkLocalAddressesAreRefused() {
        let refused: [[UInt8]] = [
            [127, 0, 0, 1], [10, 1, 2, 3], [172, 16, 0, 1], [172, 31, 255, 255], [192, 168, 1, 1], [169, 254, 169, 254],
            [100, 64, 0, 1], [0, 0, 0, 0], [224, 0, 0, 1], [255, 255, 255, 255],
            [UInt8](repeating: 0, count: 15) + [1],                     // ::1
            [UInt8](repeating: 0, count: 16),                           // ::
            [0xfd, 0x12] + [UInt8](repeating: 0, count: 14),            // unique local
            [0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [1],      // link-local
            [UInt8](repeating: 0, count: 10) + [0xff, 0xff, 192, 168, 0, 1], // ::ffff:192.168.0.1
        ]
        for a in refused { XCTAssertTrue(DeliveryHostRule.isPrivate(a), "\(a)") }
        let allowed: [[UInt8]] = [
            [142, 250, 74, 10], [172, 32, 0, 1], [100, 128, 0, 1], [8, 8, 8, 8],
            [0x2a, 0x00, 0x14, 0x50] + [UInt8](repeating: 0, count: 11) + [1],
            [UInt8](repeating: 0, count: 10) + [0xff, 0xff, 8, 8, 8, 8],
        ]
        for a in allowed { XCTAssertFalse(DeliveryHostRule.isPrivate(a), "\(a)") }
        XCTAssertTrue(DeliveryHostRule.isPrivate([1, 2, 3]), "not an address: refused")
    }

    func testANameIsRefusedWhenAnyOfItsAddressesIsPrivateOrItHasNone() {
        XCTAssertNil(DeliveryHostRule.refusal(host: "push.example", addresses: [[8, 8, 8, 8]]))
        XCTAssertNotNil(DeliveryHostRule.refusal(host: "push.example", addresses: [[8, 8, 8, 8], [127, 0, 0, 1]]))
        XCTAssertNotNil(DeliveryHostRule.refusal(host: "push.example", addresses: []))
        XCTAssertNotNil(DeliveryHostRule.refusal(host: "10.0.0.1", addresses: [[8, 8, 8, 8]]), "the spelling is checked too")
    }
}
