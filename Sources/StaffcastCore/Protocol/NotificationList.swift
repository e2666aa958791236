import Foundation

/// The answer of `GET /v1/me/notifications`: `{"notifications": [Notification]}`, newest first.
/// The server encodes it; `staffcast watch` decodes it.
public struct NotificationList: Sendable, Equatable, Codable {
    public var notifications: [StaffNotification]

    public init(_ notifications: [StaffNotification]) { self.notifications = notifications }
}
