import Foundation

/// One row of `notifications`: a personal note to one user.
public struct StaffNotification: Sendable, Equatable, Codable {
    @WireUUID public var id: UUID
    @WireUUID public var userID: UUID
    public var type: String
    public var title: String
    public var message: String
    /// The free-form `data` object, or nil for SQL NULL.
    @WireNull public var data: JSONValue?
    public var read: Bool
    @WireNull public var readAt: Date?
    @WireDate public var createdAt: Date

    // The Notification object of docs/protocol.md.
    enum CodingKeys: String, CodingKey {
        case id, userID = "user_id", type, title, message, data, read, readAt = "read_at", createdAt = "created_at"
    }

    public init(id: UUID, userID: UUID, type: String, title: String, message: String, data: JSONValue?,
                read: Bool, readAt: Date?, createdAt: Date) {
        self.id = id
        self.userID = userID
        self.type = type
        self.title = title
        self.message = message
        self.data = data
        self.read = read
        self.readAt = readAt
        self.createdAt = createdAt
    }
}
