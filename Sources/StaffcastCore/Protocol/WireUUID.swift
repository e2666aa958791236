import Foundation

/// A UUID field of a wire type: written lowercase as docs/protocol.md shows every id (Foundation
/// writes them uppercase), read in either case. Lets a wire type keep its synthesized Codable.
@propertyWrapper
public struct WireUUID: Sendable, Hashable, Codable {
    public var wrappedValue: UUID

    public init(wrappedValue: UUID) { self.wrappedValue = wrappedValue }

    public init(from decoder: Decoder) throws {
        wrappedValue = try decoder.singleValueContainer().decode(UUID.self)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(wrappedValue.uuidString.lowercased())
    }
}
