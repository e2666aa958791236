import Foundation
import Glibc

/// This process's resource use as the standard Prometheus `process_*` metrics report it, read
/// from /proc (Linux). File reads only; takes a few milliseconds with many sockets open.
struct ProcessStats {
    var residentBytes: Double
    var virtualBytes: Double
    var cpuSeconds: Double
    var openFDs: Double
    var maxFDs: Double
    var startTime: Double

    static func read() -> ProcessStats? {
        // /proc/self/stat: fields after the command (which is in parentheses and may hold spaces).
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is state (field 3 of the file): utime is file field 14, stime 15, starttime 22,
        // vsize 23, rss 24 (pages).
        func field(_ n: Int) -> Double? { fields.count > n - 3 ? Double(fields[n - 3]) : nil }
        guard let utime = field(14), let stime = field(15), let start = field(22), let vsize = field(23), let rss = field(24) else {
            return nil
        }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let page = Double(sysconf(Int32(_SC_PAGESIZE)))
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
        return ProcessStats(residentBytes: rss * page, virtualBytes: vsize, cpuSeconds: (utime + stime) / ticks,
                            openFDs: Double(fds), maxFDs: Double(limit.rlim_cur), startTime: bootTime() + start / ticks)
    }

    /// Seconds since the epoch at boot (`btime` of /proc/stat).
    private static func bootTime() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst(6).trimmingCharacters(in: .whitespaces)) ?? 0
        }
        return 0
    }
}
