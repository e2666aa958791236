import Foundation

/// The JSON body of `PATCH /v1/messages/{id}`: `{"message"}`, the corrected text. The server
/// decodes it; `APIClient.editMessage` encodes it.
public struct EditBody: Sendable, Equatable, Codable {
    public var message: String?

    public init(message: String) { self.message = message }

    public init(from decoder: Decoder) throws {
        message = try WireFields(decoder).string("message")
    }
}
