import Foundation
import StaffcastPostgres

/// `GET /v1/users/{user_id}/tokens`: a user's tokens, never the token or its digest.
struct UserTokensBody: Encodable, Sendable {
    var userID: UUID
    var tokens: [Store.TokenSummary]

    enum CodingKeys: String, CodingKey { case userID = "user_id", tokens }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(userID.wireText, forKey: .userID)
        try c.encode(tokens, forKey: .tokens)
    }
}

/// `DELETE /v1/users/{user_id}/tokens[/{token_id}]`: how many tokens the call revoked.
struct TokensRevokedBody: Encodable, Sendable {
    var userID: UUID
    var tokenID: UUID?
    var revoked: Int

    enum CodingKeys: String, CodingKey { case userID = "user_id", tokenID = "token_id", revoked }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(userID.wireText, forKey: .userID)
        if let tokenID { try c.encode(tokenID.wireText, forKey: .tokenID) }
        try c.encode(revoked, forKey: .revoked)
    }
}
