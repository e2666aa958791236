import Foundation

/// A time field of a wire type: RFC 3339 text with milliseconds (`RFC3339`), whatever date
/// strategy the coder was given. Lets a wire type keep its synthesized Codable.
@propertyWrapper
public struct WireDate: Sendable, Hashable, Codable {
    public var wrappedValue: Date

    public init(wrappedValue: Date) { self.wrappedValue = wrappedValue }

    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        let text = try c.decode(String.self)
        guard let date = RFC3339.parse(text) else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "not RFC 3339: \(text)")
        }
        wrappedValue = date
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(RFC3339.format(wrappedValue))
    }
}
