import Foundation

/// The body of `POST /v1/messages/{id}/answers`: `{"option": N}`, the 0-based index of the
/// chosen option. The server decodes it and `APIClient.answer` encodes it.
public struct PollAnswerRequest: Sendable, Equatable, Codable {
    public var option: Int64?

    public init(option: Int) { self.option = Int64(option) }

    public init(from decoder: Decoder) throws {
        option = try WireFields(decoder).int64("option", min: Int64.min)
    }

    /// The option, 0 to 5 (the most a poll has); the poll itself checks its own count.
    public static func decode(_ body: [UInt8]) throws(StaffcastError) -> Int {
        let usage = "Send {\"option\": N}, the 0-based index of the chosen option."
        guard let n = try WireJSON.decode(PollAnswerRequest.self, from: body, notAnObject: usage).option else {
            throw .invalid(usage)
        }
        guard n >= 0 else { throw .invalid("option must be at least 0; got \(n).") }
        guard n <= 5 else { throw .invalid("option \(n) is none of the poll's options (0 is the first; a poll has at most 6, so at most 5).") }
        return Int(n)
    }
}
