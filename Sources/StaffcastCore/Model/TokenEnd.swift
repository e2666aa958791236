/// Why a token a server once knew no longer works, so a refusal can say "expired" or
/// "revoked" instead of "not valid" (which then means: never a staffcast token here, or
/// mistyped). Pure.
public enum TokenEnd: String, Sendable, Equatable {
    case expired, revoked

    /// The 401 answer for a token: no token, one that ended (`end`), or one never known.
    public static func refusal(_ end: TokenEnd?, hasToken: Bool = true) -> StaffcastError {
        guard hasToken else {
            return StaffcastError(.unauthorized, "No token: send the header Authorization: Bearer TOKEN (staffcast admin token issue makes one).")
        }
        switch end {
        case .expired?:
            return StaffcastError(.unauthorized, "The token has expired. Ask an organiser for a new one (staffcast admin token issue).")
        case .revoked?:
            return StaffcastError(.unauthorized, "The token was revoked. Ask an organiser for a new one (staffcast admin token issue).")
        case nil:
            return StaffcastError(.unauthorized, "The token is not valid (mistyped, or not from this staffcast). Ask an organiser for a new one (staffcast admin token issue).")
        }
    }
}
