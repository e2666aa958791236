import Foundation
import StaffcastCore
import XCTest

/// The helpers every `HTTPRequestParser…Tests` class shares (one class per concept, in this folder).
class HTTPRequestParserTestCase: XCTestCase {
    let parser = HTTPRequestParser()

    // MARK: helpers

    func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    /// The status of a failure, or nil (with the result in the message) for anything else.
    func status(_ result: HTTPParseResult, file: StaticString = #filePath, line: UInt = #line) -> Int? {
        if case .failure(let e) = result { return e.status }
        XCTFail("expected a failure, got \(result)", file: file, line: line)
        return nil
    }

    func status(_ raw: String, parser: HTTPRequestParser? = nil, file: StaticString = #filePath, line: UInt = #line) -> Int? {
        status((parser ?? self.parser).parse(bytes(raw)), file: file, line: line)
    }

    /// The head of a whole request (or of one whose body is incomplete).
    func head(_ raw: String, file: StaticString = #filePath, line: UInt = #line) -> HTTPRequestHead? {
        switch parser.parse(bytes(raw)) {
        case .request(let r, _): return r.head
        case .incompleteBody(let h): return h
        case .upgrade(let h, _): return h
        case let other:
            XCTFail("expected a head, got \(other)", file: file, line: line)
            return nil
        }
    }

    func request(_ result: HTTPParseResult, file: StaticString = #filePath, line: UInt = #line) -> (HTTPRequest, consumed: Int)? {
        if case .request(let r, let consumed) = result { return (r, consumed) }
        XCTFail("expected a request, got \(result)", file: file, line: line)
        return nil
    }

    /// Checks every proper prefix of `raw` gives `.needMore` before the head is complete
    /// (`headLength` bytes) and `.incompleteBody(head)` after, and `raw` itself gives `whole`.
    func checkPrefixes(_ raw: [UInt8], headLength: Int, head: HTTPRequestHead?, whole: HTTPParseResult,
                       parser: HTTPRequestParser? = nil, file: StaticString = #filePath, line: UInt = #line) {
        let parser = parser ?? self.parser
        for k in 0..<raw.count {
            let result = parser.parse(Array(raw[0..<k]))
            if k < headLength {
                XCTAssertEqual(result, .needMore, "prefix of \(k) bytes", file: file, line: line)
            } else if let head {
                XCTAssertEqual(result, .incompleteBody(head), "prefix of \(k) bytes", file: file, line: line)
            } else {
                XCTFail("prefix of \(k) bytes gave \(result) but no head was expected", file: file, line: line)
            }
        }
        XCTAssertEqual(parser.parse(raw), whole, file: file, line: line)
    }

    let chunkedHead = "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
    var chunkedHeadValue: HTTPRequestHead {
        HTTPRequestHead(method: "POST", path: "/c", query: [:], isHTTP11: true,
                        headers: [("host", "a"), ("transfer-encoding", "chunked")])
    }
}
