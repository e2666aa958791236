/// A user's level on one event. Any level may read and mark read; admin and owner may send.
public enum AccessLevel: String, Sendable, CaseIterable, Codable {
    case staff, admin, owner

    public var maySend: Bool { self != .staff }
    public var maySeeReceipts: Bool { self != .staff }
    /// staff < admin < owner.
    public var rank: Int { self == .staff ? 1 : self == .admin ? 2 : 3 }
    /// Admins and owners invite, never to a level above their own.
    public func mayInvite(at level: AccessLevel) -> Bool { self != .staff && level.rank <= rank }
}
