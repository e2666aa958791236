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
        if let other = f.keys.first(where: { $0 != "message" }) {
            throw StaffcastError.invalid("An edit changes only the text: the JSON body holds \"message\" alone; got '\(other.prefix(40))'. To change anything else, retract the message and send it again. Nothing was changed.")
        }
        message = try f.string("message")
    }
}
