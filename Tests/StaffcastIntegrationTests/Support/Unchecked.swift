/// Hands a non-Sendable object to exactly one other thread (which then owns it).
final class Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
