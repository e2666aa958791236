import Foundation

/// One row of `notifications`: a personal note to one user.
public struct StaffNotification: Sendable, Equatable {
    public var id: UUID
    public var userID: UUID
    public var type: String
    public var title: String
    public var message: String
    /// The free-form `data` object, or nil for SQL NULL.
    public var data: JSONValue?
    public var read: Bool
    public var readAt: Date?
    public var createdAt: Date

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
