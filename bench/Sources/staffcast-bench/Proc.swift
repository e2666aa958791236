import Foundation
import Glibc

/// Readings from /proc: CPU seconds and memory of the server, PostgreSQL and the bench itself.
enum Proc {
    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    static func alive(_ pid: Int32) -> Bool { pid > 0 && kill(pid, 0) == 0 }

    /// VmRSS in KiB, 0 when unknown.
    static func rssKiB(_ pid: Int32) -> Int {
        guard pid > 0, let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
        }
        return 0
    }

    /// Pss in KiB (/proc/PID/smaps_rollup: resident pages, each shared page divided among the
    /// processes that map it), 0 when unknown.
    static func pssKiB(_ pid: Int32) -> Int {
        guard pid > 0, let text = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("Pss:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
        }
        return 0
    }

    /// Fields of /proc/PID/stat after the command name: [0] is field 3 (state).
    private static func statFields(_ pid: Int32) -> [Substring]? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }

    /// utime + stime of a process in seconds.
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard pid > 0, let f = statFields(pid), f.count > 12 else { return 0 }
        return ((Double(f[11]) ?? 0) + (Double(f[12]) ?? 0)) / ticksPerSecond
    }

    /// utime + stime of a process and its live children (PostgreSQL: postmaster and backends).
    static func treeCPUSeconds(_ pid: Int32) -> Double {
        guard pid > 0 else { return 0 }
        var total = cpuSeconds(pid)
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for name in entries {
            guard let child = Int32(name), child != pid, let f = statFields(child), f.count > 12,
                  Int32(f[1]) == pid else { continue }
            total += ((Double(f[11]) ?? 0) + (Double(f[12]) ?? 0)) / ticksPerSecond
        }
        return total
    }

    /// This process's user + system CPU in seconds.
    static func selfCPUSeconds() -> Double {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) / 1e6
            + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) / 1e6
    }
}
