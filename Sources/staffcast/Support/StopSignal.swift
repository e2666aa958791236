import Foundation
import Glibc

/// SIGINT and SIGTERM for `staffcast serve`: the first asks for a graceful stop, a second exits
/// at once. The handler is installed with `sigaction` before the server starts, synchronously,
/// so a signal sent the instant the banner appears is never lost (a dispatch signal source
/// registers asynchronously: a SIGTERM right after the banner used to be ignored).
///
/// The handler only does what is async-signal-safe: it bumps a counter and posts a POSIX
/// semaphore, which `wait()` (the main thread) blocks on; `_exit` on the second signal.
enum StopSignal {
    nonisolated(unsafe) private static var semaphore = sem_t()
    nonisolated(unsafe) private static var received: Int32 = 0

    /// Installs the handler for SIGINT and SIGTERM. Call once, before starting anything.
    static func install() {
        sem_init(&semaphore, 0, 0)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in
            StopSignal.received &+= 1
            if StopSignal.received > 1 { _exit(1) }
            sem_post(&StopSignal.semaphore)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
    }

    /// Blocks until the first SIGINT or SIGTERM (at once if one came since `install`).
    static func wait() {
        while sem_wait(&semaphore) != 0 && errno == EINTR {}
    }
}
