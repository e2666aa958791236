import Foundation
import StaffcastCore
import XCTest

final class TokenDigestTests: XCTestCase {
    /// SHA-256 of the empty string.
    let emptyHex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    func testOnlyThirtyTwoBytesMakeADigest() {
        XCTAssertNil(TokenDigest(bytes: [UInt8]()))
        XCTAssertNil(TokenDigest(bytes: [UInt8](repeating: 1, count: 31)))
        XCTAssertNil(TokenDigest(bytes: [UInt8](repeating: 1, count: 33)))
        XCTAssertNotNil(TokenDigest(bytes: [UInt8](repeating: 1, count: 32)))
        XCTAssertNotNil(TokenDigest(bytes: Data(count: 32))) // any collection of bytes
    }

    func testBytesAndHexRoundTrip() throws {
        let bytes = (0..<32).map { UInt8($0 * 7 + 3) }
        let d = try XCTUnwrap(TokenDigest(bytes: bytes))
        XCTAssertEqual(d.bytes, bytes)
        XCTAssertEqual(d.hex, bytes.map { String(format: "%02x", $0) }.joined())
        XCTAssertEqual(TokenDigest(hex: d.hex), d)
        XCTAssertEqual(TokenDigest(hex: d.hex.uppercased()), d)

        let empty = try XCTUnwrap(TokenDigest(hex: emptyHex))
        XCTAssertEqual(empty.hex, emptyHex)
        XCTAssertEqual(empty.bytes.first, 0xe3)
        XCTAssertEqual(empty.bytes.last, 0x55)
        XCTAssertEqual(empty.w0, 0xe3b0c44298fc1c14)
        XCTAssertEqual(empty.w3, 0xa495991b7852b855)
    }

    func testBadHexIsRefused() {
        XCTAssertNil(TokenDigest(hex: ""))
        XCTAssertNil(TokenDigest(hex: String(emptyHex.dropLast())))
        XCTAssertNil(TokenDigest(hex: emptyHex + "0"))
        XCTAssertNil(TokenDigest(hex: "\\x" + emptyHex.dropFirst(2)))
        XCTAssertNil(TokenDigest(hex: String(emptyHex.dropLast()) + "g"))
    }

    func testEqualityUsesEveryByte() throws {
        var bytes = [UInt8](repeating: 0xAB, count: 32)
        let a = try XCTUnwrap(TokenDigest(bytes: bytes))
        XCTAssertEqual(a, TokenDigest(bytes: bytes))
        for i in [0, 7, 8, 15, 16, 23, 24, 31] {
            bytes = [UInt8](repeating: 0xAB, count: 32)
            bytes[i] ^= 1
            let b = try XCTUnwrap(TokenDigest(bytes: bytes))
            XCTAssertNotEqual(a, b, "byte \(i)")
            XCTAssertEqual(Set([a, b]).count, 2)
        }
    }

    func testWorksAsASetKey() throws {
        var table: [TokenDigest: String] = [:]
        for n in 0..<1_000 {
            var bytes = [UInt8](repeating: 0, count: 32)
            bytes[31] = UInt8(n & 0xFF)
            bytes[30] = UInt8(n >> 8)
            table[try XCTUnwrap(TokenDigest(bytes: bytes))] = "user \(n)"
        }
        XCTAssertEqual(table.count, 1_000)
        var probe = [UInt8](repeating: 0, count: 32)
        probe[30] = 3
        probe[31] = 0xE7 // 999
        XCTAssertEqual(table[try XCTUnwrap(TokenDigest(bytes: probe))], "user 999")
    }
}
