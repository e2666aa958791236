import Foundation

/// How a value is written in a field of a wire type (docs/protocol.md): its own Codable form,
/// except ids (lowercase; Foundation writes them uppercase) and times (RFC 3339 with
/// milliseconds, whatever date strategy the coder was given). The one codec behind `WireUUID`,
/// `WireDate` and `WireNull`, for reading and writing alike.
public protocol WireValue: Sendable, Equatable {
    init(wireFrom decoder: Decoder) throws
    func encodeWire(to encoder: Encoder) throws
}

extension WireValue where Self: Codable {
    public init(wireFrom decoder: Decoder) throws { try self.init(from: decoder) }
    public func encodeWire(to encoder: Encoder) throws { try encode(to: encoder) }
}

extension Date: WireValue {
    public init(wireFrom decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        let text = try c.decode(String.self)
        guard let date = RFC3339.parse(text) else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "not RFC 3339: \(text)")
        }
        self = date
    }

    public func encodeWire(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(RFC3339.format(self))
    }
}

/// Read in either case.
extension UUID: WireValue {
    public func encodeWire(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(uuidString.lowercased())
    }
}

extension Int: WireValue {}
extension String: WireValue {}
extension JSONValue: WireValue {}
extension Poll: WireValue {}
