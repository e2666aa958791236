import CLibWebSockets
import Foundation

/// How a service loop runs what other threads hand it (`LoopInbox`): live fan-out first and
/// whole, everything else within a time budget per wake-up. Runs on the loop's thread only.
///
/// Why: in a reconnect storm a loop receives thousands of subscribe answers (each a history
/// frame to queue), upgrades and HTTP answers at once. Run in arrival order and all in one
/// go, a live message posted behind them waited for all of it, and its writes waited for the
/// next turn of `lws_service` after that. Now a wake-up runs every live item, then backlog
/// work for at most `stormBudget` and `stormItems`, and if work is left it wakes itself
/// again: the loop goes back to `lws_service` in between, which writes what the live items
/// queued (and reads, accepts, handshakes, each bounded per turn as well) before more storm
/// work runs. The item bound also bounds the writes the next turn does for storm answers
/// (libwebsockets writes every socket that asked, in descriptor order, in one turn).
extension ServiceLoop {
    /// Seconds of backlog work per wake-up, and items.
    static let stormBudget = 0.002
    static let stormItems = 64

    func drainInbox() {
        let (live, work) = inbox.withLock { box -> ([Work], [Work]) in
            defer {
                box.live.removeAll(keepingCapacity: true)
                box.work.removeAll(keepingCapacity: true)
            }
            return (box.live, box.work)
        }
        for item in live { item(self) }
        backlog.append(contentsOf: work)
        runBacklog()
    }

    /// Runs backlog items in order until the budget is spent; wakes the loop again if any are left.
    private func runBacklog() {
        let started = Self.monotonicNow()
        var ran = 0
        while backlogHead < backlog.count {
            let item = backlog[backlogHead]
            backlog[backlogHead] = Self.ranWork // releases what the item held as soon as it ran
            backlogHead += 1
            item(self)
            ran += 1
            // A clock read every few items: most items take microseconds.
            if ran >= Self.stormItems { break }
            if ran % 4 == 0, Self.monotonicNow() - started >= Self.stormBudget { break }
        }
        if backlogHead == backlog.count {
            backlog.removeAll(keepingCapacity: true)
            backlogHead = 0
            return
        }
        if backlogHead >= 1_024 {
            backlog.removeFirst(backlogHead)
            backlogHead = 0
        }
        if let context = lws?.context { lws_cancel_service(context) }
    }

    /// Work left in the backlog (for status).
    var backlogDepth: Int { backlog.count - backlogHead }

    private static let ranWork: Work = { _ in }
}
