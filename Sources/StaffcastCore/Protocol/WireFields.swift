import Foundation

/// The fields of one JSON object being decoded, typed and optional, with errors that name the
/// field ("max_uses must be a whole number."). For a wire type's `init(from:)`: absent and
/// `null` are both nil, and anything else of the wrong type is refused, never coerced (`true`
/// is not the number 1). Use it inside that `init(from:)` only: the decoder's buffer does not
/// outlive the call.
public struct WireFields {
    typealias Key = WireKey

    let container: KeyedDecodingContainer<Key>

    /// Throws `DecodingError.typeMismatch` when the value is not a JSON object.
    public init(_ decoder: Decoder) throws {
        container = try decoder.container(keyedBy: Key.self)
    }

    init(_ container: KeyedDecodingContainer<Key>) { self.container = container }

    /// Present and not `null`.
    public func has(_ key: String) -> Bool {
        container.contains(Key(key)) && !((try? container.decodeNil(forKey: Key(key))) ?? true)
    }

    /// Every key of the object.
    public var keys: [String] { container.allKeys.map(\.stringValue) }

    /// Present, even as `null`.
    public func contains(_ key: String) -> Bool { container.contains(Key(key)) }

    public func string(_ key: String) throws(StaffcastError) -> String? {
        do { return try container.decodeIfPresent(String.self, forKey: Key(key)) } catch {
            throw .invalid("\(key) must be a string.")
        }
    }

    public func bool(_ key: String) throws(StaffcastError) -> Bool? {
        do { return try container.decodeIfPresent(Bool.self, forKey: Key(key)) } catch {
            throw .invalid("\(key) must be true or false.")
        }
    }

    /// An array of strings (nil when absent).
    public func strings(_ key: String) throws(StaffcastError) -> [String]? {
        do { return try container.decodeIfPresent([String].self, forKey: Key(key)) } catch {
            throw .invalid("\(key) must be an array of strings.")
        }
    }

    public func requiredUUID(_ key: String) throws(StaffcastError) -> UUID {
        guard let s = try string(key) else { throw .invalid("\(key) is missing; it must be a UUID.") }
        guard let id = UUID(wireText: s) else { throw .invalid("\(key) '\(s.prefix(64))' is not a UUID.") }
        return id
    }

    /// A whole number (`3`, `3.0`, `3e2`), at least `min`.
    public func int64(_ key: String, min: Int64) throws(StaffcastError) -> Int64? {
        let d: Double?
        do { d = try container.decodeIfPresent(Double.self, forKey: Key(key)) } catch {
            throw .invalid("\(key) must be a whole number.")
        }
        guard let d else { return nil }
        guard d.rounded() == d else { throw .invalid("\(key) must be a whole number.") }
        guard d >= -9.0e18, d <= 9.0e18 else { throw .invalid("\(key) is too large: at most 9000000000000000000.") }
        let i = Int64(d)
        guard i >= min else { throw .invalid("\(key) must be at least \(min); got \(i).") }
        return i
    }

    /// The fields of a nested object; nil when absent or `null`, `notAnObject` when it is
    /// something else.
    public func object(_ key: String, notAnObject: StaffcastError) throws(StaffcastError) -> WireFields? {
        guard has(key) else { return nil }
        do { return WireFields(try container.nestedContainer(keyedBy: Key.self, forKey: Key(key))) } catch {
            throw notAnObject
        }
    }

    /// Any Decodable value (nil when absent or `null`); its own errors pass through.
    public func decode<T: Decodable>(_ type: T.Type, _ key: String) throws -> T? {
        try container.decodeIfPresent(T.self, forKey: Key(key))
    }
}
