/// A user's level on one event. Any level may read and mark read; admin and owner may send.
public enum AccessLevel: String, Sendable, CaseIterable, Codable {
    case staff, admin, owner

    public var maySend: Bool { self != .staff }
    public var maySeeReceipts: Bool { self != .staff }
}
