import Foundation
import StaffcastCore
import StaffcastPostgres
import Synchronization

/// Where the server is in its lifecycle and whether it is ready for traffic: the state and
/// port, and the readiness sources (the database probe and the change listener) once started.
/// `StaffcastServer` changes it; the API and the status reports read it. Any thread: one lock,
/// held for a field's read or write.
final class ServerHealth: Sendable {
    let startedAt = Date()
    /// How recent the probe's last round trip and the listener's last read must be.
    let rule: ReadinessRule
    private let shared = Mutex<Shared>(Shared())

    private struct Shared {
        var state = StaffcastServer.State.idle
        var port = 0
        var probe: DatabaseProbe?
        var listener: ChangeListener?
    }

    init(listenerPollInterval: Double) {
        rule = ReadinessRule(probeInterval: 1, probeDeadline: 2, listenerPollInterval: listenerPollInterval)
    }

    var state: StaffcastServer.State {
        get { shared.withLock { $0.state } }
        set { shared.withLock { $0.state = newValue } }
    }

    /// Moves to `draining` from `running` or `starting`; false when already stopping or stopped.
    func beginDraining() -> Bool {
        shared.withLock {
            guard $0.state == .running || $0.state == .starting else { return false }
            $0.state = .draining
            return true
        }
    }

    var isDraining: Bool { state == .draining }

    /// The port actually listened on (useful with port 0).
    var port: Int {
        get { shared.withLock { $0.port } }
        set { shared.withLock { $0.port = newValue } }
    }

    /// The readiness sources, once they run.
    func attach(probe: DatabaseProbe, listener: ChangeListener) {
        shared.withLock {
            $0.probe = probe
            $0.listener = listener
        }
    }

    var listenerState: ChangeListener.State? { shared.withLock { $0.listener?.state } }

    /// Seconds the readiness probe's last completed round trip took (0 before the first).
    var databaseLatency: Double { shared.withLock { $0.probe?.lastLatency } ?? 0 }

    /// Ready for traffic (`/readyz`): from what the probe and the listener last recorded, so
    /// asking never waits on the database.
    var readiness: Readiness {
        let (state, probe, listener) = shared.withLock { ($0.state, $0.probe, $0.listener) }
        return rule.judge(now: Monotonic.now(), state: state.rawValue, lastProbe: probe?.lastSuccess,
                          listenerState: listener?.state.rawValue ?? "stopped", lastRead: listener?.lastRead)
    }
}
