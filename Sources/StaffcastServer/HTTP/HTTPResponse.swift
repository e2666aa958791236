import Foundation
import StaffcastCore

/// A complete HTTP answer, built off the service thread and written there in one go.
struct HTTPResponse: Sendable {
    var status: Int
    var contentType: String
    var body: [UInt8]

    static func json<T: Encodable>(_ status: Int, _ value: T) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body = (try? encoder.encode(value)).map(Array.init) ?? Array("{}".utf8)
        return HTTPResponse(status: status, contentType: "application/json", body: body + [0x0A])
    }

    static func error(_ e: StaffcastError) -> HTTPResponse {
        json(e.code.httpStatus, ["error": ["code": e.code.rawValue, "message": e.message]])
    }

    static func text(_ status: Int, _ text: String, contentType: String = "text/plain; charset=utf-8") -> HTTPResponse {
        HTTPResponse(status: status, contentType: contentType, body: Array(text.utf8))
    }
}
