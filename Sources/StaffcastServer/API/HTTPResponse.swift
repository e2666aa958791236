import Foundation
import StaffcastCore

/// A complete HTTP answer, built off the service thread and written there in one go.
struct HTTPResponse: Sendable {
    var status: Int
    var contentType: String
    var body: [UInt8]
    /// The `allow` header of a 405: the methods the path answers.
    var allow: String? = nil
    /// More header lines, e.g. the console's Content-Security-Policy.
    var headers: [(name: String, value: String)] = []
    /// API answers are never stored; the web assets are revalidated (WebAsset).
    var cacheControl = "no-store"

    static func json<T: Encodable>(_ status: Int, _ value: T) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body = (try? encoder.encode(value)).map(Array.init) ?? Array("{}".utf8)
        return HTTPResponse(status: status, contentType: "application/json", body: body + [0x0A])
    }

    static func error(_ e: StaffcastError) -> HTTPResponse {
        json(e.code.httpStatus, ErrorBody(e))
    }

    static func text(_ status: Int, _ text: String, contentType: String = "text/plain; charset=utf-8") -> HTTPResponse {
        HTTPResponse(status: status, contentType: contentType, body: Array(text.utf8))
    }
}

extension HTTPResponse {
    /// The whole response on the wire: status line, headers and (unless `headOnly`) body.
    func serialized(keepAlive: Bool, headOnly: Bool = false) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        // A 304 has no body and no framing of its own (RFC 9110 15.4.5).
        if status != 304 { head += "content-type: \(contentType)\r\ncontent-length: \(body.count)\r\n" }
        head += "cache-control: \(cacheControl)\r\n"
        if status == 405 { head += "allow: \(allow ?? "GET, POST")\r\n" }
        for h in headers { head += "\(h.name): \(h.value)\r\n" }
        head += keepAlive ? "\r\n" : "connection: close\r\n\r\n"
        var out = Array(head.utf8)
        if !headOnly { out += body }
        return out
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 204: return "No Content"
        case 304: return "Not Modified"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 411: return "Length Required"
        case 413: return "Content Too Large"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 503: return "Service Unavailable"
        case 505: return "HTTP Version Not Supported"
        default: return "Status"
        }
    }

    /// The answer to a request that could not be framed (the connection closes after it).
    static func framing(_ e: HTTPParseError) -> HTTPResponse {
        let code: ErrorCode = e.status == 413 || e.status == 431 ? .tooLarge : .invalid
        var r = HTTPResponse.error(StaffcastError(code, e.message))
        r.status = e.status
        return r
    }
}
