import Foundation

/// A field of a wire type that writers before it was added leave out: read as the type's
/// `wireDefault` (`[]`, `false`) when absent or `null`, always written. Lets a wire type keep
/// its synthesized Codable.
@propertyWrapper
public struct WireDefault<Value: Codable & Sendable & Equatable & WireDefaultable>: Sendable, Equatable, Codable {
    public var wrappedValue: Value

    public init(wrappedValue: Value) { self.wrappedValue = wrappedValue }

    public init(from decoder: Decoder) throws { wrappedValue = try Value(from: decoder) }

    public func encode(to encoder: Encoder) throws { try wrappedValue.encode(to: encoder) }
}

/// The value of a `WireDefault` field that was not sent.
public protocol WireDefaultable {
    static var wireDefault: Self { get }
}

extension Array: WireDefaultable {
    public static var wireDefault: Array { [] }
}

extension Bool: WireDefaultable {
    public static var wireDefault: Bool { false }
}

extension KeyedDecodingContainer {
    /// What a synthesized `init(from:)` calls for a `WireDefault` field.
    public func decode<Value>(_ type: WireDefault<Value>.Type, forKey key: Key) throws -> WireDefault<Value> {
        try decodeIfPresent(type, forKey: key) ?? WireDefault(wrappedValue: .wireDefault)
    }
}
