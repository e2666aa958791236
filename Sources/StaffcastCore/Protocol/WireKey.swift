/// A JSON object key named at run time, for wire types whose keys depend on the case
/// (`ServerFrame`, `ClientFrame`) or are read one by one (`WireFields`).
public struct WireKey: CodingKey, Sendable {
    public var stringValue: String
    public var intValue: Int? { nil }
    public init(_ name: String) { stringValue = name }
    public init(stringValue: String) { self.stringValue = stringValue }
    public init?(intValue: Int) { nil }
}
