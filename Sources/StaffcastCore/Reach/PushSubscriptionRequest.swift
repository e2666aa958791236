import Foundation

/// A browser's PushSubscription as `POST /v1/push/subscriptions` takes it:
/// `{"endpoint", "keys": {"p256dh", "auth"}}`, checked so that what is stored can be encrypted
/// to (RFC 8291: an uncompressed P-256 point and a 16-byte secret) and sent to (an https URL).
public struct PushSubscriptionRequest: Sendable, Equatable {
    public var endpoint: String
    /// base64url, as the browser gave them.
    public var p256dh: String
    public var auth: String

    public static let maxEndpointLength = 2_048

    public init(endpoint: String, p256dh: String, auth: String) throws(StaffcastError) {
        guard endpoint.utf8.count <= Self.maxEndpointLength, TextRules.isSingleToken(endpoint), let url = URL(string: endpoint),
              url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty else {
            throw .invalid("endpoint must be the https URL of the browser's push service (PushSubscription.endpoint), "
                           + "without spaces or control characters.")
        }
        // Port 0 cannot be connected to: every push would fail for a day.
        if let port = url.port, !(1...65_535).contains(port) {
            throw .invalid("endpoint has port \(port): a push service listens on a port from 1 to 65535.")
        }
        guard let key = Base64URL.decode(p256dh), key.count == 65, key.first == 0x04 else {
            throw .invalid("keys.p256dh must be the subscription's P-256 public key: 65 bytes, uncompressed, base64url.")
        }
        guard let secret = Base64URL.decode(auth), secret.count == 16 else {
            throw .invalid("keys.auth must be the subscription's 16-byte authentication secret, base64url.")
        }
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
    }

    /// From the JSON body (`PushSubscription.toJSON()`; `expirationTime` and other fields are ignored).
    public static func decode(body: [UInt8]) throws(StaffcastError) -> PushSubscriptionRequest {
        let b = try WireJSON.decode(Body.self, from: body, notAnObject:
            "The body must be the browser's PushSubscription as JSON: {\"endpoint\":\"https://…\",\"keys\":{\"p256dh\":\"…\",\"auth\":\"…\"}}.")
        guard let endpoint = b.endpoint else { throw .invalid("endpoint is missing.") }
        guard let keys = b.keys else { throw Body.keysMissing }
        guard let p256dh = keys.p256dh else { throw .invalid("keys.p256dh is missing.") }
        guard let auth = keys.auth else { throw .invalid("keys.auth is missing.") }
        return try PushSubscriptionRequest(endpoint: endpoint, p256dh: p256dh, auth: auth)
    }

    /// The body as a browser sends it: `{"endpoint", "keys": {"p256dh", "auth"}}`.
    public struct Body: Sendable, Equatable, Codable {
        public struct Keys: Sendable, Equatable, Codable {
            public var p256dh: String?
            public var auth: String?
        }

        public var endpoint: String?
        public var keys: Keys?

        public init(endpoint: String, p256dh: String, auth: String) {
            self.endpoint = endpoint
            self.keys = Keys(p256dh: p256dh, auth: auth)
        }

        static let keysMissing = StaffcastError.invalid("keys is missing: {\"p256dh\":\"…\",\"auth\":\"…\"}.")

        public init(from decoder: Decoder) throws {
            let f = try WireFields(decoder)
            endpoint = try f.string("endpoint")
            // keys that is not an object counts as missing.
            if let k = try f.object("keys", notAnObject: Self.keysMissing) {
                keys = Keys(p256dh: try k.string("p256dh"), auth: try k.string("auth"))
            }
        }
    }
}
