import Foundation

/// The JSON body of `PATCH /v1/messages/{id}`: `{"message"}`, the corrected text. The server
/// decodes it; `APIClient.editMessage` encodes it.
public struct EditBody: Sendable, Equatable, Codable {
    public var message: String?

    public init(message: String) { self.message = message }

    /// Only the text can be edited; any other field is refused by name (it answered 200 having
    /// changed nothing, so a sender believed a priority was raised).
    public init(from decoder: Decoder) throws {
        let f = try WireFields(decoder)
        try f.refuseUnknown(KnownFields(["message"]), in: "An edit changes only the text (retract and send again to change anything else); its body")
        message = try f.string("message")
    }
}
