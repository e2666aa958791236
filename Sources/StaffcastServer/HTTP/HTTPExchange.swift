import Foundation

/// One HTTP request in progress. Owned by the service thread from `LWS_CALLBACK_HTTP` until its
/// answer is written or the client goes away.
final class HTTPExchange {
    let id: Int
    let wsi: OpaquePointer
    let method: String
    let path: String
    /// URL query parameters, already URL-decoded.
    let query: [String: String]
    let bearerToken: String?
    let contentType: String
    var body: [UInt8] = []
    var bodyTooLarge = false
    var route: HTTPRoute?
    /// Set once the request has been handed to a handler (on an empty body, or at body end).
    var dispatched = false
    var response: HTTPResponse?
    let startedAt = Date()

    init(id: Int, wsi: OpaquePointer, method: String, path: String, query: [String: String],
         bearerToken: String?, contentType: String) {
        self.id = id
        self.wsi = wsi
        self.method = method
        self.path = path
        self.query = query
        self.bearerToken = bearerToken
        self.contentType = contentType
    }
}
