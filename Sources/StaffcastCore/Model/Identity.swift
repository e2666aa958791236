import Foundation

/// Who a request acts as, once its bearer token has been checked.
public struct Identity: Sendable, Equatable, Hashable {
    public var userID: UUID
    public var displayName: String

    public init(userID: UUID, displayName: String) {
        self.userID = userID
        self.displayName = displayName
    }
}
