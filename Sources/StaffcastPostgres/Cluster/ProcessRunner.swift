import Foundation
import Glibc

/// Runs a helper program (initdb, pg_ctl, runuser) to completion and captures its output.
///
/// posix_spawn + waitpid rather than Foundation's Process: the child starts with a clean
/// signal mask and default handlers (a parent that blocks SIGCHLD would otherwise leave
/// Process waiting forever), and its output goes to a temporary file, not a pipe, because
/// `pg_ctl start` leaves a daemon behind that inherits the child's descriptors. For the same
/// reason the child keeps only stdin/stdout/stderr: every other descriptor of ours (a server's
/// listening sockets, the pipes a test runner reads our output from) is closed in it, whether
/// or not it was opened close-on-exec, so the postmaster never holds one of them open.
enum ProcessRunner {
    struct Outcome {
        var status: Int32
        var output: String
    }

    static func run(_ executable: String, _ arguments: [String]) throws(PostgresError) -> Outcome {
        let outputPath = NSTemporaryDirectory() + "staffcast-\(UUID().uuidString).out"
        defer { unlink(outputPath) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        closeInheritedDescriptors(&actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard rc == 0 else {
            throw PostgresError(.cluster, "cannot run \(executable): \(String(cString: strerror(rc)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = (status & 0x7f) == 0
        let code = exited ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return Outcome(status: code, output: text)
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+): the Glibc module does not
    /// import it, so it is looked up by name.
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// Adds to `actions` the closing of every descriptor from 3 up: at once in the child with
    /// closefrom where glibc has it (nothing opened meanwhile by another thread slips through),
    /// else each descriptor open now (a close action on one closed meanwhile is ignored).
    private static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        if let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") {
            let addCloseFrom = unsafeBitCast(symbol, to: AddCloseFrom.self)
            if addCloseFrom(&actions, 3) == 0 { return }
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for fd in open.compactMap(Int32.init) where fd > 2 {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
    }
}
