import Foundation

/// The body of `POST /v1/users/{id}/notifications`: `{"type","title","message","data"?}`. The
/// server decodes it and validates it into a `NotificationRequest`.
public struct NotificationBody: Sendable, Equatable, Codable {
    public var type: String?
    public var title: String?
    public var message: String?
    public var data: JSONValue?

    public init(type: String, title: String, message: String, data: JSONValue? = nil) {
        self.type = type
        self.title = title
        self.message = message
        self.data = data
    }

    public init(from decoder: Decoder) throws {
        let f = try WireFields(decoder)
        type = try f.string("type")
        title = try f.string("title")
        message = try f.string("message")
        data = try f.decode(JSONValue.self, "data")
    }

    public func request(userID: UUID) throws(StaffcastError) -> NotificationRequest {
        guard let type, let title, let message else {
            throw .invalid("A notification needs the string fields type, title and message.")
        }
        if let data {
            let size = (try? JSONEncoder().encode(data).count) ?? 0
            if size > Limits.maxNotificationDataBytes {
                throw StaffcastError(.tooLarge, "data is \(size) bytes; the limit is \(Limits.maxNotificationDataBytes).")
            }
        }
        return try NotificationRequest(userID: userID, type: type, title: title, message: message, data: data)
    }
}
