import CBenchEpoll
import Foundation
import Glibc

// Small pieces the benchmark is built from: clocks, formatting, the log. The others have a file
// each: Histogram, Bitset, Proc (/proc readings), Needles (byte scanning), ClientFrames, Net and
// HTTPHead (blocking sockets and HTTP).

@inline(__always) func monoNs() -> Int64 { Int64(sc_mono_ns()) }
@inline(__always) func realNs() -> Int64 { Int64(sc_real_ns()) }

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ text: String) { description = text }
}

func fmt(_ format: String, _ args: CVarArg...) -> String { String(format: format, arguments: args) }

/// 12345678 → "12,345,678".
func grouped(_ v: Int) -> String {
    let s = String(abs(v))
    var out = ""
    for (i, c) in s.enumerated() {
        if i > 0 && (s.count - i) % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return v < 0 ? "-" + out : out
}

func log(_ text: String) {
    print(text)
    fflush(nil) // stdout is a line buffer only on a terminal; scripts/bench.sh tees the output
}
