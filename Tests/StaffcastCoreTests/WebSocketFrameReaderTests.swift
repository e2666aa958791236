import StaffcastCore
import XCTest

/// RFC 6455 framing as the server reads it over TLS: every rule, fed in whole and in every cut.
final class WebSocketFrameReaderTests: XCTestCase {
    typealias Event = WebSocketFrameReader.Event

    /// A client frame: masked (unless told), with the length in the shortest form.
    static func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, masked: Bool = true, rsv: UInt8 = 0,
                      mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]) -> [UInt8] {
        var out: [UInt8] = [(fin ? 0x80 : 0) | rsv << 4 | opcode]
        let m: UInt8 = masked ? 0x80 : 0
        let n = payload.count
        if n < 126 {
            out.append(m | UInt8(n))
        } else if n <= 0xFFFF {
            out += [m | 126, UInt8(n >> 8), UInt8(n & 0xFF)]
        } else {
            out.append(m | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((n >> shift) & 0xFF)) }
        }
        if masked { out += mask }
        for (i, b) in payload.enumerated() { out.append(masked ? b ^ mask[i & 3] : b) }
        return out
    }

    func read(_ bytes: [UInt8]) -> [Event] {
        var reader = WebSocketFrameReader()
        return reader.read(bytes)
    }

    /// Feeds `bytes` cut at every position into two reads, and one byte at a time; the data
    /// must come out the same (chunks joined), as must the other events.
    func assertCutsAgree(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) {
        let whole = Self.joined(read(bytes))
        for cut in 0...bytes.count {
            var reader = WebSocketFrameReader()
            let events = reader.read(Array(bytes[..<cut])) + reader.read(Array(bytes[cut...]))
            XCTAssertEqual(Self.joined(events), whole, "cut at \(cut)", file: file, line: line)
        }
        var reader = WebSocketFrameReader()
        let single = bytes.flatMap { reader.read([$0]) }
        XCTAssertEqual(Self.joined(single), whole, "byte by byte", file: file, line: line)
    }

    /// Data chunks of one message joined into one `.data(…, final: true)`.
    static func joined(_ events: [Event]) -> [Event] {
        var out: [Event] = []
        var pending: [UInt8] = []
        for event in events {
            if case .data(let bytes, let final, let binary) = event {
                pending += bytes
                if final {
                    out.append(.data(pending, final: true, binary: binary))
                    pending = []
                }
            } else {
                out.append(event)
            }
        }
        return out
    }

    func text(_ s: String) -> [UInt8] { Array(s.utf8) }

    // MARK: data

    func testAMaskedTextFrameIsUnmasked() {
        XCTAssertEqual(read(Self.frame(0x1, text("Hello"))), [.data(text("Hello"), final: true, binary: false)])
        // RFC 6455 5.7's own example.
        XCTAssertEqual(read([0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]),
                       [.data(text("Hello"), final: true, binary: false)])
    }

    func testBinaryAndEmptyMessages() {
        XCTAssertEqual(read(Self.frame(0x2, [0, 1, 2])), [.data([0, 1, 2], final: true, binary: true)])
        XCTAssertEqual(read(Self.frame(0x1, [])), [.data([], final: true, binary: false)])
    }

    func testExtendedLengths() {
        let medium = [UInt8](repeating: 0x61, count: 300)
        let large = [UInt8](repeating: 0x62, count: 70_000)
        XCTAssertEqual(Self.joined(read(Self.frame(0x1, medium))), [.data(medium, final: true, binary: false)])
        XCTAssertEqual(Self.joined(read(Self.frame(0x1, large))), [.data(large, final: true, binary: false)])
    }

    func testAPayloadArrivingInPiecesIsPassedOnAsItComes() {
        var reader = WebSocketFrameReader()
        let bytes = Self.frame(0x1, text("abcdef"))
        XCTAssertEqual(reader.read(Array(bytes[..<9])), [.data(text("abc"), final: false, binary: false)])
        XCTAssertEqual(reader.read(Array(bytes[9...])), [.data(text("def"), final: true, binary: false)])
    }

    func testFragmentsAndContinuations() {
        let bytes = Self.frame(0x1, text("Hel"), fin: false) + Self.frame(0x0, text("l"), fin: false)
            + Self.frame(0x0, [], fin: false) + Self.frame(0x0, text("o"))
        XCTAssertEqual(Self.joined(read(bytes)), [.data(text("Hello"), final: true, binary: false)])
        XCTAssertEqual(read(bytes).last, .data(text("o"), final: true, binary: false))
        let binary = Self.frame(0x2, [1], fin: false) + Self.frame(0x0, [2])
        XCTAssertEqual(Self.joined(read(binary)), [.data([1, 2], final: true, binary: true)])
        assertCutsAgree(bytes)
    }

    func testControlFramesInTheMiddleOfAFragmentedMessage() {
        let bytes = Self.frame(0x1, text("He"), fin: false) + Self.frame(0x9, text("p")) + Self.frame(0xA, [])
            + Self.frame(0x0, text("y"))
        XCTAssertEqual(Self.joined(read(bytes)), [.ping(text("p")), .pong([]), .data(text("Hey"), final: true, binary: false)])
        assertCutsAgree(bytes)
    }

    func testSeveralMessagesInOneRead() {
        let bytes = Self.frame(0x1, text("a")) + Self.frame(0x1, text("b")) + Self.frame(0x9, [])
        XCTAssertEqual(read(bytes), [.data(text("a"), final: true, binary: false), .data(text("b"), final: true, binary: false), .ping([])])
        assertCutsAgree(bytes)
    }

    // MARK: protocol errors (1002)

    func assertFailure(_ bytes: [UInt8], code: UInt16 = 1002, _ words: String, file: StaticString = #filePath, line: UInt = #line) {
        var reader = WebSocketFrameReader()
        let events = reader.read(bytes)
        guard case .failure(let got, let reason)? = events.last else {
            return XCTFail("expected a failure, got \(events)", file: file, line: line)
        }
        XCTAssertEqual(got, code, file: file, line: line)
        XCTAssertTrue(reason.contains(words), reason, file: file, line: line)
        XCTAssertTrue(reader.isFinished, file: file, line: line)
        XCTAssertEqual(reader.read(Self.frame(0x1, text("late"))), [], "nothing is read after a failure", file: file, line: line)
    }

    func testAnUnmaskedFrameFails() {
        assertFailure(Self.frame(0x1, text("hi"), masked: false), "masked")
    }

    func testReservedBitsFail() {
        for rsv: UInt8 in [1, 2, 4] { assertFailure(Self.frame(0x1, text("hi"), rsv: rsv), "reserved") }
    }

    func testUnknownOpcodesFail() {
        for opcode: UInt8 in [0x3, 0x4, 0x5, 0x6, 0x7, 0xB, 0xC, 0xD, 0xE, 0xF] {
            assertFailure(Self.frame(opcode, []), "opcode")
        }
    }

    func testControlFramesMustBeWholeAndShort() {
        assertFailure(Self.frame(0x9, text("p"), fin: false), "fragmented")
        assertFailure(Self.frame(0x9, [UInt8](repeating: 0, count: 126)), "125")
        assertFailure(Self.frame(0x8, [UInt8](repeating: 0, count: 126)), "125")
        XCTAssertEqual(read(Self.frame(0xA, [UInt8](repeating: 7, count: 125))), [.pong([UInt8](repeating: 7, count: 125))])
    }

    func testContinuationRules() {
        assertFailure(Self.frame(0x0, text("x")), "continuation")
        assertFailure(Self.frame(0x1, text("a")) + Self.frame(0x0, text("x")), "continuation")
        assertFailure(Self.frame(0x1, text("a"), fin: false) + Self.frame(0x1, text("b")), "new message")
        assertFailure(Self.frame(0x1, text("a"), fin: false) + Self.frame(0x2, [1]), "new message")
    }

    func testALengthWithItsTopBitSetFails() {
        assertFailure([0x81, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 1], "top bit")
    }

    // MARK: UTF-8 (1007)

    func testTextThatIsNotUTF8Fails() {
        assertFailure(Self.frame(0x1, [0x61, 0xFF]), code: 1007, "UTF-8")
        assertFailure(Self.frame(0x1, [0xC0, 0xAF]), code: 1007, "UTF-8") // overlong '/'
        assertFailure(Self.frame(0x1, [0xED, 0xA0, 0x80]), code: 1007, "UTF-8") // a surrogate
        assertFailure(Self.frame(0x1, [0xF4, 0x90, 0x80, 0x80]), code: 1007, "UTF-8") // past U+10FFFF
        assertFailure(Self.frame(0x1, [0xE2, 0x82]), code: 1007, "UTF-8") // ends mid-character
        // Binary is not checked.
        XCTAssertEqual(read(Self.frame(0x2, [0xFF])), [.data([0xFF], final: true, binary: true)])
    }

    func testACharacterSplitAcrossFragmentsIsFine() {
        let euro: [UInt8] = [0xE2, 0x82, 0xAC]
        let bytes = Self.frame(0x1, [0x61, euro[0]], fin: false) + Self.frame(0x0, [euro[1]], fin: false) + Self.frame(0x0, [euro[2]])
        XCTAssertEqual(Self.joined(read(bytes)), [.data([0x61] + euro, final: true, binary: false)])
        assertCutsAgree(bytes)
        // A fragment boundary does not end a message: only the final frame is checked whole.
        assertFailure(Self.frame(0x1, [euro[0]], fin: false) + Self.frame(0x0, [0x61]), code: 1007, "UTF-8")
    }

    func testTheValidatorOnItsOwn() {
        for good in ["", "ascii", "Ünïcödé", "日本語", "𝄞 clef", "\u{10FFFF}"] {
            var v = UTF8Validator()
            XCTAssertTrue(v.feed(Array(good.utf8)) && v.isComplete, good)
        }
        for bad: [UInt8] in [[0x80], [0xC1, 0x81], [0xE0, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xF0, 0x80, 0x80, 0x80]] {
            var v = UTF8Validator()
            XCTAssertFalse(v.feed(bad), "\(bad)")
        }
        var v = UTF8Validator()
        XCTAssertTrue(v.feed([0xF0, 0x9D]))
        XCTAssertFalse(v.isComplete)
    }

    // MARK: close

    func testClosePayloads() {
        XCTAssertEqual(read(Self.frame(0x8, [])), [.close(code: nil, reason: "")])
        XCTAssertEqual(read(Self.frame(0x8, [0x03, 0xE8] + text("bye"))), [.close(code: 1000, reason: "bye")])
        XCTAssertEqual(read(Self.frame(0x8, [0x0F, 0xA0])), [.close(code: 4000, reason: "")])
        assertFailure(Self.frame(0x8, [0x03]), "one byte")
        for code: UInt16 in [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000] {
            assertFailure(Self.frame(0x8, [UInt8(code >> 8), UInt8(code & 0xFF)]), "close code")
        }
        assertFailure(Self.frame(0x8, [0x03, 0xE8, 0xFF]), code: 1007, "reason")
    }

    func testNothingIsReadAfterTheClose() {
        var reader = WebSocketFrameReader()
        XCTAssertEqual(reader.read(Self.frame(0x8, []) + Self.frame(0x1, text("after"))), [.close(code: nil, reason: "")])
        XCTAssertTrue(reader.isFinished)
        XCTAssertEqual(reader.read(Self.frame(0x1, text("later"))), [])
    }

    // MARK: what the server writes

    func testControlFramesTheServerWrites() {
        XCTAssertEqual(WebSocketControlFrame.heartbeat, [0x89, 0x02, 0x68, 0x62])
        XCTAssertEqual(WebSocketControlFrame.pong([1, 2]), [0x8A, 0x02, 1, 2])
        XCTAssertEqual(WebSocketControlFrame.close(code: 4401, reason: "revoked"), [0x88, 9, 0x11, 0x31] + text("revoked"))
        XCTAssertEqual(WebSocketControlFrame.closeReply(code: nil), [0x88, 0])
        XCTAssertEqual(WebSocketControlFrame.closeReply(code: 1000), [0x88, 2, 0x03, 0xE8])
        // A long reason is cut on a character boundary to fit 125 bytes.
        let long = WebSocketControlFrame.close(code: 1001, reason: String(repeating: "é", count: 100))
        XCTAssertEqual(long[1], 124)
        var reader = WebSocketFrameReader()
        // Read back as a client would send it (masked), it is a valid close.
        guard case .close(1001, let reason)? = reader.read(Self.frame(0x8, Array(long[2...]))).first else { return XCTFail() }
        XCTAssertEqual(reason, String(repeating: "é", count: 61))
    }
}
