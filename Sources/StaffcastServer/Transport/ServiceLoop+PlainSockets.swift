import CLibWebSockets
import CStaffcastSocket
import Foundation

/// How a WebSocket's bytes move, by its carrier (`FramedWebSocket.Carrier`). Runs on the
/// loop's thread only.
///
/// A plain WebSocket stays on the loop's own epoll set, where the HTTP front accepted it, and is
/// read and written here with plain system calls; libwebsockets never sees it. Why: adopting it
/// into libwebsockets cost a wsi (about a KiB) per connection, a walk of libwebsockets' whole
/// descriptor table at every adoption and close (its `_DEBUG` sanity check, 12–13 % of a
/// reconnect storm), and a poll-interest change, a wake-up and a callback per write. Here a
/// write the engine asks for is made at the end of the loop's turn (`writeAskedSockets`), straight
/// to the socket: a committed batch fanned out to N sockets costs N sends and nothing else. Only
/// bytes the kernel does not take wait (`FramedWebSocket.unsent`, bounded by one write step) and
/// make the epoll set watch the socket for writability. A TLS WebSocket stays on its
/// libwebsockets wsi, which does the TLS and keeps what the socket did not take.
extension ServiceLoop {
    /// Asks for `framedWritable` soon: plain, at the end of this turn (or once the socket takes
    /// its held bytes); TLS, at libwebsockets' next writable callback.
    func askWritable(_ socket: FramedWebSocket) {
        switch socket.carrier {
        case .tls(let wsi):
            lws_callback_on_writable(wsi)
        case .plain:
            guard !socket.ended, !socket.holdsUnsent, !socket.writeAsked else { return }
            socket.writeAsked = true
            if answering { writeFirst.append(socket) } else { writeSoon.append(socket) }
        }
    }

    /// Writes bytes as they are; what the socket does not take now waits and goes first.
    /// False: the connection failed (the caller resets it).
    func send(_ socket: FramedWebSocket, _ bytes: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        switch socket.carrier {
        case .tls(let wsi):
            return lws_write(wsi, UnsafeMutablePointer(mutating: bytes), count, staffcast_lws_write_raw()) >= count
        case .plain(let fd):
            socket.kernelQueueEmpty = false
            if socket.holdsUnsent {
                socket.unsent.append(contentsOf: UnsafeBufferPointer(start: bytes, count: count))
                return true
            }
            let n = sc_write(fd, bytes, count)
            if n == count { return true }
            guard n >= 0 || -n == EAGAIN || -n == EWOULDBLOCK || -n == EINTR else { return false }
            let taken = max(0, n)
            socket.unsent = Array(UnsafeBufferPointer(start: bytes + taken, count: count - taken))
            socket.unsentStart = 0
            watch(socket, writable: true)
            return true
        }
    }

    /// Bytes written but not yet taken by the socket (libwebsockets' for TLS).
    func holdsOutput(_ socket: FramedWebSocket) -> Bool {
        switch socket.carrier {
        case .tls(let wsi): return lws_partial_buffered(wsi) != 0
        case .plain: return socket.holdsUnsent
        }
    }

    /// Stops or resumes reading a WebSocket (the engine's back-pressure).
    func setReading(_ socket: FramedWebSocket, _ on: Bool) {
        switch socket.carrier {
        case .tls(let wsi):
            lws_rx_flow_control(wsi, on ? 1 : 0)
        case .plain:
            guard !socket.ended, socket.readInterest != on else { return }
            socket.readInterest = on
            watch(socket, writable: socket.writeInterest)
        }
    }

    /// Whether the socket is still open (an ended one is closed at the end of the turn, or by
    /// libwebsockets soon after, for TLS).
    func isOpen(_ socket: FramedWebSocket) -> Bool {
        switch socket.carrier {
        case .tls(let wsi): return framed[UInt(bitPattern: wsi)] === socket
        case .plain(let fd): return plainFramed[fd] === socket
        }
    }

    /// The TCP socket under a WebSocket, or -1.
    func descriptor(_ socket: FramedWebSocket) -> Int32 {
        switch socket.carrier {
        case .tls(let wsi): return lws_get_socket_fd(wsi)
        case .plain(let fd): return fd
        }
    }

    private func watch(_ socket: FramedWebSocket, writable: Bool) {
        guard case .plain(let fd) = socket.carrier else { return }
        socket.writeInterest = writable
        poller?.modify(fd, readable: socket.readInterest, writable: writable)
    }

    // MARK: plain sockets on the epoll set

    /// The epoll set reported a plain WebSocket ready.
    func plainReady(_ socket: FramedWebSocket, _ ready: EventPoller.Ready) {
        guard !socket.ended else { return }
        // In error or hung up while not reading: nothing can reach the peer any more.
        if ready.failed, !socket.readInterest { return plainEnd(socket, reset: true) }
        if ready.readable || ready.failed { plainRead(socket) }
        if ready.writable, !socket.ended { plainFlushUnsent(socket) }
    }

    /// One read (level-triggered: what is left wakes the loop again, after other sockets had
    /// their turn), framed at once.
    private func plainRead(_ socket: FramedWebSocket) {
        guard case .plain(let fd) = socket.carrier else { return }
        let n = sc_read(fd, readBuffer.baseAddress, readBuffer.count)
        if n > 0 {
            _ = framedRead(socket, UnsafeRawBufferPointer(rebasing: readBuffer[0..<n]))
        } else if n == 0 {
            plainEnd(socket, reset: false) // the peer closed TCP
        } else if -n != EAGAIN && -n != EWOULDBLOCK && -n != EINTR {
            plainEnd(socket, reset: true)
        }
    }

    /// Writes what the socket did not take before; once all of it is out, the socket is
    /// written as if it had asked (`framedWritable`: a pending close, the engine's next frames).
    private func plainFlushUnsent(_ socket: FramedWebSocket) {
        guard case .plain(let fd) = socket.carrier else { return }
        if socket.holdsUnsent {
            let n = socket.unsent.withUnsafeBufferPointer { buffer in
                sc_write(fd, buffer.baseAddress! + socket.unsentStart, buffer.count - socket.unsentStart)
            }
            if n > 0 {
                socket.unsentStart += n
            } else if -n != EAGAIN && -n != EWOULDBLOCK && -n != EINTR {
                return plainEnd(socket, reset: true)
            }
            guard !socket.holdsUnsent else { return }
        }
        socket.unsent = []
        socket.unsentStart = 0
        watch(socket, writable: false)
        _ = framedWritable(socket)
    }

    /// Ends a plain WebSocket: it leaves the epoll set now (with `reset`, its close will reset
    /// the TCP connection, discarding what the kernel holds) and is closed and forgotten at the
    /// end of the turn (`writeAskedSockets`), as libwebsockets closes a wsi after the callback
    /// that asked: whatever is still running for it this turn sees it `ended`.
    func plainEnd(_ socket: FramedWebSocket, reset: Bool) {
        guard case .plain(let fd) = socket.carrier, !socket.ended else { return }
        socket.ended = true
        if reset { sc_set_linger_zero(fd) }
        poller?.remove(fd)
        endedPlain.append(socket)
    }

    /// The end of a turn: every plain WebSocket the engine asked to write is written (a socket
    /// with more to say asks again and is written again, until the engine has nothing more or
    /// the kernel takes nothing more; each engine queue is bounded, so this ends), then the
    /// ended ones are closed and forgotten. Those an answer of the answers lane asked for go
    /// first (`writeFirst`), and every `socketsBetweenAnswers` sockets the answers that arrived
    /// meanwhile are run and written: a fan-out to 5,000 sockets is ~5 ms of writes, and a
    /// publisher's window waits for its `sent`.
    func writeAskedSockets() {
        while !writeFirst.isEmpty || !writeSoon.isEmpty {
            writeFirstAsked()
            let asked = writeSoon
            writeSoon = []
            for (n, socket) in asked.enumerated() {
                if n % Self.socketsBetweenAnswers == Self.socketsBetweenAnswers - 1 {
                    runAnswers()
                    writeFirstAsked()
                }
                socket.writeAsked = false
                if !socket.ended { _ = framedWritable(socket) }
            }
        }
        // Sends an answer released (a publisher under its in-flight cap) go now, not next turn.
        if !gatheredSends.isEmpty { flushSends() }
        closeEndedPlain()
    }

    static let socketsBetweenAnswers = 64

    /// Writes the sockets an answer of the answers lane asked to write (`writeFirst`).
    private func writeFirstAsked() {
        while !writeFirst.isEmpty {
            let asked = writeFirst
            writeFirst = []
            for socket in asked {
                socket.writeAsked = false
                if !socket.ended { _ = framedWritable(socket) }
            }
        }
    }

    private func closeEndedPlain() {
        while !endedPlain.isEmpty {
            let ended = endedPlain
            endedPlain = []
            for socket in ended {
                guard case .plain(let fd) = socket.carrier, plainFramed[fd] === socket else { continue }
                plainFramed[fd] = nil
                _ = sc_close(fd)
                forget(socket.id)
            }
        }
    }

    /// The loop is stopping: every plain WebSocket is closed and forgotten (their slots
    /// released), as libwebsockets' `destroy` does for TLS ones.
    func closeEveryPlain() {
        closeEndedPlain()
        for socket in Array(plainFramed.values) {
            socket.ended = true
            endedPlain.append(socket)
        }
        closeEndedPlain()
        writeSoon.removeAll()
        writeFirst.removeAll()
    }
}
