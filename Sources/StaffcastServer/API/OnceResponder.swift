import Synchronization

/// Hands the first answer of several racing ones (a worker's and a deadline's) to `respond`
/// and drops the rest: an HTTP request gets exactly one response. Any thread.
final class OnceResponder: Sendable {
    private let respond: HTTPAPI.Respond
    private let answered = Mutex(false)

    init(_ respond: @escaping HTTPAPI.Respond) { self.respond = respond }

    func respond(_ response: HTTPResponse) {
        let first = answered.withLock { done in
            defer { done = true }
            return !done
        }
        if first { respond(response) }
    }
}
