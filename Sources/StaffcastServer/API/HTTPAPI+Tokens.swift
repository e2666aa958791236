import Foundation
import StaffcastCore
import StaffcastPostgres

/// Token lifecycle over HTTP (docs/protocol.md): `GET /v1/users/{user_id}/tokens` lists a
/// user's tokens, `DELETE` on it revokes all of them, `DELETE …/tokens/{token_id}` one. For
/// the ops token, the user themself, or an owner of an event the user has access to; the
/// database decides who may (sql/006_roles.sql) and audits every revoke. A revoke reaches
/// every server through the token log like one from the shell: within 2 s new upgrades get
/// 401 and the token's open WebSockets are closed with 4401.
extension HTTPAPI {
    func userTokens(_ user: UUID, tokenID: UUID?, method: String, bearer: String?, _ respond: @escaping Respond) {
        runOnWorker(bearer, allowOpsToken: true, respond) { store, identity, done in
            let caller = identity?.userID // nil: the ops token
            if method == "DELETE" {
                let revoked = try store.revokeTokens(ofUser: user, token: tokenID, managedBy: caller)
                done(.json(200, TokensRevokedBody(userID: user, tokenID: tokenID, revoked: revoked)))
            } else {
                done(.json(200, UserTokensBody(userID: user, tokens: try store.tokens(ofUser: user, managedBy: caller))))
            }
        }
    }
}
