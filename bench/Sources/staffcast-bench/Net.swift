import CBenchEpoll
import Foundation
import Glibc

/// Blocking sockets for the publisher and the few control requests.
enum Net {
    /// A connected TCP socket (non-blocking), or an error text.
    static func connect(host: String, port: Int, timeout: Double = 10) -> Result<Int32, BenchFailure> {
        let fd = Wire.connect(host, port)
        if fd < 0 { return .failure(BenchFailure("connect \(host):\(port): \(String(cString: strerror(-fd)))")) }
        var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let r = poll(&p, 1, Int32(timeout * 1000))
        let e = sc_so_error(fd)
        if r <= 0 || e != 0 {
            Wire.closeReset(fd)
            return .failure(BenchFailure("connect \(host):\(port): \(r <= 0 ? "timed out" : String(cString: strerror(e)))"))
        }
        return .success(fd)
    }

    /// Writes all bytes to a non-blocking socket (waiting with poll when it is full).
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], timeout: Double = 10) -> Bool {
        var off = 0
        let deadline = monoNs() + Int64(timeout * 1e9)
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { Wire.send(fd, $0.baseAddress! + off, $0.count - off) }
            if n > 0 { off += n; continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                if monoNs() > deadline { return false }
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&p, 1, 100)
                continue
            }
            return false
        }
        return true
    }

    /// Reads what is there (waiting up to `timeoutMs`); nil on end of stream or error.
    static func read(_ fd: Int32, into buffer: inout [UInt8], timeoutMs: Int32) -> Int? {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let r = poll(&p, 1, timeoutMs)
        if r == 0 { return 0 }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { Wire.recv(fd, $0.baseAddress!, $0.count) }
        if n > 0 { buffer += chunk[0..<n]; return n }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return 0 }
        return nil
    }

    /// One HTTP/1.1 GET; (status, body) or nil.
    static func get(host: String, port: Int, path: String, token: String?) -> (status: Int, body: String)? {
        request(host: host, port: port, method: "GET", path: path, token: token, json: nil)
    }

    /// One HTTP/1.1 request on a fresh connection, with an optional JSON body; (status, body) or nil.
    static func request(host: String, port: Int, method: String, path: String, token: String?, json: String?) -> (status: Int, body: String)? {
        guard case .success(let fd) = connect(host: host, port: port) else { return nil }
        defer { Wire.closeReset(fd) }
        var request = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n"
        if let token { request += "Authorization: Bearer \(token)\r\n" }
        if let json { request += "Content-Type: application/json\r\nContent-Length: \(json.utf8.count)\r\n\r\n" + json } else { request += "\r\n" }
        guard writeAll(fd, Array(request.utf8)) else { return nil }
        var buffer: [UInt8] = []
        let deadline = monoNs() + 10_000_000_000
        while monoNs() < deadline {
            guard let n = read(fd, into: &buffer, timeoutMs: 200) else { break }
            if let parsed = HTTPHead.parse(buffer), buffer.count >= parsed.headLength + (parsed.contentLength ?? Int.max) {
                let body = buffer[parsed.headLength..<(parsed.headLength + parsed.contentLength!)]
                return (parsed.status, String(decoding: body, as: UTF8.self))
            }
            _ = n
        }
        guard let parsed = HTTPHead.parse(buffer) else { return nil }
        return (parsed.status, String(decoding: buffer[parsed.headLength...], as: UTF8.self))
    }
}
