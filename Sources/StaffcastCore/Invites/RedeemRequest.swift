import Foundation

/// The body of `POST /v1/invites/{code}/redeem`: `{"display_name"}`, the name others see in
/// receipts. The server decodes it and `staffcast join` encodes it.
public struct RedeemRequest: Sendable, Equatable, Codable {
    public var displayName: String?

    public init(displayName: String) { self.displayName = displayName }

    enum CodingKeys: String, CodingKey { case displayName = "display_name" }

    public init(from decoder: Decoder) throws {
        displayName = try WireFields(decoder).string("display_name")
    }

    public static func decode(_ body: [UInt8]) throws(StaffcastError) -> String {
        let r = try WireJSON.decode(RedeemRequest.self, from: body,
                                    notAnObject: "The body must be JSON such as {\"display_name\":\"Sam (gate 3)\"}.")
        guard let name = r.displayName else { throw .invalid("display_name is missing: the name others see in receipts.") }
        return name
    }
}
