import Foundation

/// An optional field of a wire type that is written `null` when nil, not left out (every
/// object in docs/protocol.md shows all its fields), and read as nil when absent or `null`.
/// The value is written as `WireValue` says. Lets a wire type keep its synthesized Codable.
@propertyWrapper
public struct WireNull<Value: WireValue>: Sendable, Equatable, Codable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    public init(from decoder: Decoder) throws {
        wrappedValue = try decoder.singleValueContainer().decodeNil() ? nil : try Value(wireFrom: decoder)
    }

    public func encode(to encoder: Encoder) throws {
        guard let wrappedValue else {
            var c = encoder.singleValueContainer()
            return try c.encodeNil()
        }
        try wrappedValue.encodeWire(to: encoder)
    }
}

extension KeyedDecodingContainer {
    /// What a synthesized `init(from:)` calls for a `WireNull` field: an absent key is nil too.
    public func decode<Value>(_ type: WireNull<Value>.Type, forKey key: Key) throws -> WireNull<Value> {
        try decodeIfPresent(type, forKey: key) ?? WireNull(wrappedValue: nil)
    }
}
