import CBenchEpoll
import Foundation
import Glibc

extension SubscriberLoop {
    // MARK: writing and closing

    func write(_ c: Subscriber, _ bytes: [UInt8]) {
        if !c.out.isEmpty { c.out += bytes; return }
        let n = bytes.withUnsafeBytes { Wire.send(c.fd, $0.baseAddress, $0.count) }
        if n == bytes.count { return }
        if n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
            dropped(c, "send: \(String(cString: strerror(errno)))")
            return
        }
        c.out = Array(bytes[max(0, n)...])
        _ = sc_epoll_ctl(epfd, 3, c.fd, UInt32(SC_EV_IN | SC_EV_OUT))
    }

    func flush(_ c: Subscriber) {
        let n = c.out.withUnsafeBytes { Wire.send(c.fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR { dropped(c, "send: \(String(cString: strerror(errno)))") }
            return
        }
        c.out.removeFirst(n)
        if c.out.isEmpty { _ = sc_epoll_ctl(epfd, 3, c.fd, UInt32(SC_EV_IN)) }
    }

    /// The connection ended without a close frame.
    func dropped(_ c: Subscriber, _ reason: String) {
        if c.state == .subscribed {
            c.closeCode = -1
            traffic.closedByServer[-1, default: 0] += 1
            closedDuringScenario.append(c)
            finish(c)
        } else {
            fail(c, reason)
        }
    }

    /// A connection that never got to `subscribed`.
    func fail(_ c: Subscriber, _ reason: String) {
        open.fail(reason.count > 140 ? String(reason.prefix(140)) + "…" : reason)
        finish(c)
    }

    func finish(_ c: Subscriber) {
        guard c.state != .closed else { return }
        if c.state != .subscribed { pending -= 1 } else if tracking { trackedSubscribers -= 1 }
        c.state = .closed
        _ = sc_epoll_ctl(epfd, 2, c.fd, 0)
        Wire.closeReset(c.fd)
        conns[Int(c.fd)] = nil
        live -= 1
    }
}
