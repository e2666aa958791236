import Foundation

/// Typed access to the fields of a decoded JSON object, with errors that name the field.
public struct JSONFields {
    public let object: [String: Any]
    public init(_ object: [String: Any]) { self.object = object }

    private func present(_ key: String) -> Any? {
        guard let v = object[key], !(v is NSNull) else { return nil }
        return v
    }

    public func string(_ key: String) throws(StaffcastError) -> String? {
        guard let v = present(key) else { return nil }
        guard let s = v as? String, !JSONFields.isBool(v) else { throw .invalid("\(key) must be a string.") }
        return s
    }

    public func bool(_ key: String) throws(StaffcastError) -> Bool? {
        guard let v = present(key) else { return nil }
        guard JSONFields.isBool(v), let b = v as? Bool else { throw .invalid("\(key) must be true or false.") }
        return b
    }

    /// An array of strings (nil when absent).
    public func strings(_ key: String) throws(StaffcastError) -> [String]? {
        guard let v = present(key) else { return nil }
        guard let list = v as? [Any] else { throw .invalid("\(key) must be an array of strings.") }
        var out: [String] = []
        for item in list {
            guard let s = item as? String, !JSONFields.isBool(item) else { throw .invalid("\(key) must be an array of strings.") }
            out.append(s)
        }
        return out
    }

    public func requiredUUID(_ key: String) throws(StaffcastError) -> UUID {
        guard let s = try string(key) else { throw .invalid("\(key) is missing; it must be a UUID.") }
        guard let id = UUID(uuidString: s) else { throw .invalid("\(key) '\(s.prefix(64))' is not a UUID.") }
        return id
    }

    public func int64(_ key: String, min: Int64) throws(StaffcastError) -> Int64? {
        guard let v = present(key) else { return nil }
        guard !JSONFields.isBool(v), let n = v as? NSNumber else { throw .invalid("\(key) must be a whole number.") }
        let d = n.doubleValue
        guard d.rounded() == d, d >= -9.0e18, d <= 9.0e18 else { throw .invalid("\(key) must be a whole number.") }
        let i = Int64(d)
        guard i >= min else { throw .invalid("\(key) must be at least \(min); got \(i).") }
        return i
    }

    /// JSONSerialization hands `true`/`false` back as NSNumber subclasses (`__NSCFBoolean` on
    /// both Linux and Darwin); tell them apart so that `true` is not taken for the number 1.
    static func isBool(_ v: Any) -> Bool {
        String(describing: type(of: v)).contains("Bool")
    }
}
