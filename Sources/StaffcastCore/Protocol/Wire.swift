import Foundation

/// A field of a wire type written and read as `WireValue` says, whatever strategies the coder
/// was given. Lets a wire type keep its synthesized Codable.
@propertyWrapper
public struct Wire<Value: WireValue>: Sendable, Equatable, Codable {
    public var wrappedValue: Value

    public init(wrappedValue: Value) { self.wrappedValue = wrappedValue }

    public init(from decoder: Decoder) throws { wrappedValue = try Value(wireFrom: decoder) }

    public func encode(to encoder: Encoder) throws { try wrappedValue.encodeWire(to: encoder) }
}

extension Wire: Hashable where Value: Hashable {}

/// A time field: RFC 3339 text with milliseconds (`RFC3339`).
public typealias WireDate = Wire<Date>

/// An id field: written lowercase as docs/protocol.md shows every id, read in either case.
public typealias WireUUID = Wire<UUID>
