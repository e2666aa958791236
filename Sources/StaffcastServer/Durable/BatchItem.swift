import StaffcastCore

/// What a batched request can be told when it will not be committed (a stranded batch).
protocol FailableItem: Sendable {
    func fail(_ error: StaffcastError)
}

/// A request waiting in a batcher with the completion that gets its own outcome (called once,
/// on a database worker, after its batch committed or failed).
struct BatchItem<Request: Sendable, Value>: FailableItem {
    typealias Completion = @Sendable (Result<Value, StaffcastError>) -> Void

    var request: Request
    var done: Completion

    func fail(_ error: StaffcastError) { done(.failure(error)) }
}
