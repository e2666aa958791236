import Foundation

/// Times read field by field, for the wire types that still decode by hand (`ServerFrame`,
/// `EventSummary`); the same codec as `WireDate` and `WireNull`.
extension KeyedDecodingContainer {
    func decodeRFC3339(forKey key: Key) throws -> Date {
        try decode(WireDate.self, forKey: key).wrappedValue
    }

    func decodeRFC3339IfPresent(forKey key: Key) throws -> Date? {
        try decode(WireNull<Date>.self, forKey: key).wrappedValue
    }
}
