import Foundation

/// The answer to `DELETE /v1/invites/{code}`: `{"code", "event_id", "revoked": true}`.
struct InviteRevokedBody: Encodable, Sendable {
    var code: String
    var eventID: UUID

    enum CodingKeys: String, CodingKey { case code, eventID = "event_id", revoked }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(code, forKey: .code)
        try c.encode(eventID.wireText, forKey: .eventID)
        try c.encode(true, forKey: .revoked)
    }
}
