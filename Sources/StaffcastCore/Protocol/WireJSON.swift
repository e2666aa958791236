import Foundation

/// Reads a request body into its Codable wire type with the API's sentences: the wire type's
/// `init(from:)` reads its fields through `WireFields`, which names a field of the wrong type
/// ("max_uses must be a whole number."); a body that is not the object at all gets the
/// caller's sentence. Wire types keep their fields optional and say themselves what is
/// missing. Pure.
public enum WireJSON {
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8], notAnObject: String) throws(StaffcastError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch let error as StaffcastError {
            throw error // a wire type's own check, thrown from its init(from:)
        } catch {
            throw .invalid(notAnObject)
        }
    }

    /// The body a client sends.
    public static func encode<T: Encodable>(_ value: T) -> Data? {
        try? JSONEncoder().encode(value)
    }
}
