import Foundation
import Glibc

/// SIGINT and SIGTERM for `staffcast serve`: the first asks for a graceful stop, a second exits
/// at once. The handler is installed with `sigaction` before the server starts, synchronously,
/// so a signal sent the instant the banner appears is never lost (a dispatch signal source
/// registers asynchronously: a SIGTERM right after the banner used to be ignored).
///
/// The handler only does what is async-signal-safe: it bumps a counter and posts a POSIX
/// semaphore, which `wait()` (the main thread) blocks on; `_exit` on the second signal.
///
/// The semaphore and the counter live in memory of their own (pointers), not in `static var`s:
/// `sem_wait(&var)` holds a Swift access to the variable for as long as it blocks, so the
/// handler's `sem_post(&var)` was a second, simultaneous access, and a debug build trapped
/// ("Fatal access conflict detected") on every SIGTERM instead of stopping gracefully.
enum StopSignal {
    /// Set once by `install` (before any signal can arrive), read by the handler and `wait`.
    nonisolated(unsafe) private static var semaphore: UnsafeMutablePointer<sem_t>?
    nonisolated(unsafe) private static var received: UnsafeMutablePointer<Int32>?

    /// Installs the handler for SIGINT and SIGTERM. Call once, before starting anything.
    static func install() {
        let sem = UnsafeMutablePointer<sem_t>.allocate(capacity: 1) // lives as long as the process
        sem_init(sem, 0, 0)
        let count = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        count.initialize(to: 0)
        semaphore = sem
        received = count
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in
            guard let count = StopSignal.received, let sem = StopSignal.semaphore else { return }
            count.pointee &+= 1
            if count.pointee > 1 { _exit(1) }
            sem_post(sem)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
    }

    /// Blocks until the first SIGINT or SIGTERM (at once if one came since `install`).
    static func wait() {
        guard let sem = semaphore else { return }
        while sem_wait(sem) != 0 && errno == EINTR {}
    }
}
