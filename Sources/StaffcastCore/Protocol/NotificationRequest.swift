import Foundation

/// A validated request to notify one user (HTTP `POST /v1/users/{id}/notifications`).
public struct NotificationRequest: Sendable, Equatable {
    public var userID: UUID
    public var type: String
    public var title: String
    public var message: String
    public var data: JSONValue?

    public init(userID: UUID, type: String, title: String, message: String, data: JSONValue?) throws(StaffcastError) {
        func require(_ value: String, _ field: String, max: Int) throws(StaffcastError) {
            guard !value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw .invalid("\(field) is empty.")
            }
            try TextRules.requireStorable(value, field: field)
            guard value.utf8.count <= max else {
                throw StaffcastError(.tooLarge, "\(field) is \(value.utf8.count) bytes; the limit is \(max).")
            }
        }
        try require(type, "type", max: Limits.maxNotificationTypeBytes)
        // The server's own alerts: the console shows them red, as someone asking for help or
        // nobody reading an emergency. An organiser could forge "X needs help" (attack round).
        if Self.reservedTypes.contains(type.trimmingCharacters(in: .whitespaces).lowercased()) {
            throw .invalid("type '\(type)' is the server's own (\(Self.reservedTypes.sorted().joined(separator: ", ")) alerts); pick another type, such as note.")
        }
        try require(title, "title", max: Limits.maxNotificationTitleBytes)
        try require(message, "message", max: Limits.maxMessageBytes)
        if let data {
            switch data {
            case .object, .null: break
            default: throw .invalid("data must be a JSON object or null.")
            }
        }
        self.userID = userID
        self.type = type
        self.title = title
        self.message = message
        self.data = data == .null ? nil : data
    }

    /// Types only the server writes (safety-check help, escalation rounds).
    public static let reservedTypes: Set<String> = ["help", "escalation"]
}
