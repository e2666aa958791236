import Foundation

/// The answer to `DELETE /v1/messages/{id}`: `{"message_id", "retracted": true}`.
struct RetractedBody: Encodable, Sendable {
    var messageID: UUID

    enum CodingKeys: String, CodingKey { case messageID = "message_id", retracted }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(messageID.wireText, forKey: .messageID)
        try c.encode(true, forKey: .retracted)
    }
}
