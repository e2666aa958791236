import Foundation
import Synchronization

/// The service loops of a server, for those that ask all of them at once (status, metrics,
/// presence). Set once when the loops exist; any thread.
final class LoopDirectory: Sendable {
    private let loops = Mutex<[ServiceLoop]>([])

    func set(_ all: [ServiceLoop]) { loops.withLock { $0 = all } }

    /// The loops (empty before `set`).
    var all: [ServiceLoop] { loops.withLock { $0 } }

    /// Asks every loop for a snapshot of what it holds; `completion` runs once all answered
    /// (on the thread of the last loop to answer, so it must not block), or after 2 s with
    /// those that did.
    func collect(_ completion: @escaping @Sendable ([LoopSnapshot]) -> Void) {
        let all = loops.withLock { $0 }
        let box = Mutex<(snapshots: [LoopSnapshot], done: Bool)>(([], false))
        let expected = all.count
        guard expected > 0 else { return completion([]) }
        let finish: @Sendable (Bool) -> Void = { force in
            let result: [LoopSnapshot]? = box.withLock { b in
                guard !b.done, force || b.snapshots.count == expected else { return nil }
                b.done = true
                return b.snapshots.sorted { $0.index < $1.index }
            }
            if let result { completion(result) }
        }
        for loop in all {
            loop.post { l in
                let s = l.snapshot()
                box.withLock { $0.snapshots.append(s) }
                finish(false)
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + 2) { finish(true) }
    }
}
