import Foundation
import Glibc

/// Runs a helper program (initdb, pg_ctl, runuser) to completion and captures its output.
///
/// posix_spawn + waitpid rather than Foundation's Process: the child starts with a clean
/// signal mask and default handlers (a parent that blocks SIGCHLD would otherwise leave
/// Process waiting forever), and its output goes to a temporary file, not a pipe, because
/// `pg_ctl start` leaves a daemon behind that inherits the child's descriptors.
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
}
