import CLibWebSockets
import CStaffcastSocket
import Foundation
import StaffcastCore

/// Plain HTTP on a service loop's own descriptors: accepting, reading, framing requests
/// (`HTTPRequestParser`), answering them in order, deadlines, and the upgrade decision that
/// hands an admitted WebSocket to libwebsockets. Runs on the loop's thread only.
extension ServiceLoop {
    func serviceSockets() {
        guard let poller else { return }
        for ready in poller.poll() {
            if ready.fd == listenFD {
                acceptAll()
            } else if let connection = http[ready.fd] {
                if ready.readable || ready.failed { read(connection) }
                if http[ready.fd] === connection, ready.writable { flush(connection) }
            }
        }
    }

    func acceptAll() {
        var peer = [CChar](repeating: 0, count: 64)
        // Bounded per turn (the listening socket stays ready): the loop returns to
        // libwebsockets, which writes live frames, before accepting more of a storm.
        for _ in 0..<Self.acceptsPerTurn {
            let fd = sc_accept(listenFD, &peer, Int32(peer.count))
            if fd < 0 {
                if -fd != EAGAIN && -fd != EWOULDBLOCK && -fd != EINTR && -fd != ECONNABORTED {
                    logger.warning("accept failed", metadata: ["error": "\(SocketError(operation: "accept", code: -fd))"])
                }
                return
            }
            if let stale = adopted.removeValue(forKey: fd) { gatekeeper.release(stale.admission) }
            let peerText = String(decoding: peer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if configuration.tlsEnabled {
                acceptTLS(fd, peer: peerText)
                continue
            }
            let connection = HTTPConnection(fd: fd, serial: nextSerial, peer: peerText, now: Self.monotonicNow())
            nextSerial += 1
            do {
                try poller?.add(fd)
                http[fd] = connection
            } catch {
                _ = sc_close(fd)
            }
        }
    }

    static let acceptsPerTurn = 64

    func read(_ connection: HTTPConnection) {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while connection.input.count < HTTPConnection.maxBuffered {
            let n = chunk.withUnsafeMutableBytes { sc_read(connection.fd, $0.baseAddress, $0.count) }
            if n > 0 {
                if connection.input.isEmpty { connection.requestStartedAt = Self.monotonicNow() }
                connection.input += chunk[0..<n]
                connection.lastActivity = Self.monotonicNow()
                if n < chunk.count { break }
            } else if n == 0 {
                connection.peerClosed = true
                break
            } else if -n == EAGAIN || -n == EWOULDBLOCK || -n == EINTR {
                break
            } else {
                close(connection, reset: true)
                return
            }
        }
        frame(connection)
        if connection.peerClosed, http[connection.fd] === connection {
            connection.closeAfterAnswers = true
            if connection.answers.isEmpty && connection.output.isEmpty { close(connection, reset: false) }
        }
    }

    /// Frames as many whole requests as the pipeline allows and dispatches them in order.
    func frame(_ connection: HTTPConnection) {
        while connection.answers.count < HTTPConnection.maxPipelined, !connection.closeAfterAnswers, !connection.awaitingToken,
              !connection.input.isEmpty {
            switch parser.parse(connection.input) {
            case .needMore:
                flush(connection)
                return
            case .incompleteBody(let head):
                if head.header("expect")?.lowercased() == "100-continue", !connection.sentContinue, connection.answers.isEmpty {
                    connection.sentContinue = true
                    connection.output += Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
                }
                flush(connection)
                return
            case .failure(let e):
                connection.input = []
                refuse(connection, .framing(e), status: e.status)
                return
            case .upgrade(let head, let headLength):
                guard connection.answers.isEmpty, connection.output.isEmpty else {
                    flush(connection) // answer what came before, then take the upgrade
                    return
                }
                upgrade(connection, head, headLength: headLength)
                return
            case .request(let request, let consumed):
                connection.input.removeFirst(consumed)
                connection.sentContinue = false
                connection.requestStartedAt = Self.monotonicNow()
                let keepAlive = request.head.keepAlive && !draining
                if !keepAlive { connection.closeAfterAnswers = true }
                let slot = connection.reserveAnswer()
                let fd = connection.fd
                let serial = connection.serial
                let headOnly = request.head.method == "HEAD"
                let peer = connection.peer
                let serve: @Sendable (ServiceLoop, TokenResolver.Outcome) -> Void = { loop, outcome in
                    var refusal: StaffcastError?
                    if case .refuse(let e) = outcome { refusal = e }
                    loop.api.handle(request, peer: peer, refusal: refusal) { [weak loop] response in
                        let bytes = response.serialized(keepAlive: keepAlive, headOnly: headOnly)
                        loop?.post { l in l.answer(fd: fd, serial: serial, slot: slot, bytes) }
                    }
                }
                // A token the table does not know yet is looked up first (off this thread); its
                // answer slot keeps the pipeline in order meanwhile.
                let check = resolver.check(request.head.bearerToken, peer: peer) { [weak self] outcome in
                    self?.post { loop in serve(loop, outcome) }
                }
                if case .decided(let outcome) = check { serve(self, outcome) }
            }
        }
        flush(connection)
    }

    /// An answer is ready (on the loop's thread).
    func answer(fd: Int32, serial: Int, slot: Int, _ bytes: [UInt8]) {
        guard let connection = http[fd], connection.serial == serial, connection.fill(slot, bytes) else { return }
        flush(connection)
        if connection.answers.count < HTTPConnection.maxPipelined, !connection.input.isEmpty, http[fd] === connection {
            frame(connection)
        }
    }

    /// Answers a request that cannot be served and closes the connection after it.
    func refuse(_ connection: HTTPConnection, _ response: HTTPResponse, status: Int) {
        var response = response
        response.status = status
        connection.closeAfterAnswers = true
        let slot = connection.reserveAnswer()
        _ = connection.fill(slot, response.serialized(keepAlive: false))
        flush(connection)
    }

    /// Writes what is ready, in order; closes a finished connection.
    func flush(_ connection: HTTPConnection) {
        guard http[connection.fd] === connection else { return }
        if let wsi = connection.tls { return flushTLS(connection, wsi) }
        connection.releaseReadyAnswers()
        while !connection.output.isEmpty {
            let n = connection.output.withUnsafeBytes { sc_write(connection.fd, $0.baseAddress, $0.count) }
            if n > 0 {
                connection.output.removeFirst(n)
                connection.lastWriteProgress = Self.monotonicNow()
                connection.lastActivity = connection.lastWriteProgress
            } else if -n == EAGAIN || -n == EWOULDBLOCK || -n == EINTR {
                break
            } else {
                close(connection, reset: true)
                return
            }
        }
        let wantWrite = !connection.output.isEmpty
        if wantWrite != connection.writeInterest {
            connection.writeInterest = wantWrite
            poller?.modify(connection.fd, writable: wantWrite)
        }
        if connection.isFinished { close(connection, reset: false) }
    }

    /// Once a tick: whether an answer has stopped moving for `write_stall_timeout`. What is
    /// waiting counts wherever it is: ours, libwebsockets' (TLS), and the kernel's send queue
    /// (`SIOCOUTQ`), so a reader that stops reading is caught even when the whole answer fit in
    /// the socket. Bytes leaving any of them are progress.
    func writeStalled(_ connection: HTTPConnection, now: Double) -> Bool {
        let kernel = Int(max(0, sc_send_queue(connection.fd)))
        let waiting = connection.output.count + kernel + (tlsHoldsOutput(connection) ? 1 : 0)
        defer { connection.lastQueued = waiting }
        guard waiting > 0 else { return false }
        if waiting < connection.lastQueued { connection.lastWriteProgress = now }
        return now - connection.lastWriteProgress >= configuration.writeStallTimeout
    }

    func close(_ connection: HTTPConnection, reset: Bool) {
        guard http[connection.fd] === connection else { return }
        if let wsi = connection.tls { return closeTLS(connection, wsi, reset: reset) }
        http[connection.fd] = nil
        poller?.remove(connection.fd)
        if reset { sc_close_reset(connection.fd) } else { _ = sc_close(connection.fd) }
    }

    /// A WebSocket upgrade: decided here from memory (path, draining, token, caps); admitted
    /// ones go to libwebsockets with the bytes read so far. A token the table does not know
    /// yet is looked up first (`TokenResolver`, off this thread): the connection waits, framing
    /// nothing, and `resumeUpgrade` decides once the answer is posted back.
    func upgrade(_ connection: HTTPConnection, _ head: HTTPRequestHead, headLength: Int, tokenChecked: Bool = false) {
        guard head.path == "/v1/ws" else {
            return refuse(connection, .error(.notFound("WebSockets connect at /v1/ws.")), status: 404)
        }
        guard !draining else {
            return refuse(connection, .error(.unavailable("This server is shutting down; connect again in a moment.")), status: 503)
        }
        guard connection.input.count <= 2_048 else {
            return refuse(connection, .error(StaffcastError(.tooLarge,
                "The upgrade request is larger than 2,048 bytes; send fewer or shorter headers.")), status: 431)
        }
        if !tokenChecked {
            let fd = connection.fd
            let serial = connection.serial
            let check = resolver.check(head.bearerToken, peer: connection.peer) { [weak self] outcome in
                self?.post { loop in loop.resumeUpgrade(fd: fd, serial: serial, head, headLength: headLength, outcome) }
            }
            switch check {
            case .pending:
                connection.awaitingToken = true
                return
            case .decided(.refuse(let error)):
                return refuseUpgrade(connection, error)
            case .decided(.proceed):
                break
            }
        }
        switch gatekeeper.admit(token: head.bearerToken) {
        case .failure(let error):
            refuseUpgrade(connection, error)
        case .success(let admission):
            if let tls = connection.tls { return upgradeTLS(connection, tls, head, admission: admission) }
            let fd = connection.fd
            let bytes = connection.input
            http[fd] = nil
            poller?.remove(fd)
            adopted[fd] = (admission, Self.monotonicNow())
            do {
                try lws?.adopt(fd, alreadyRead: bytes)
            } catch {
                if let entry = adopted.removeValue(forKey: fd) { gatekeeper.release(entry.admission) }
                logger.warning("websocket handshake not started", metadata: ["error": "\(error)"])
            }
        }
    }

    /// The token lookup of a waiting upgrade ended (on the loop's thread).
    func resumeUpgrade(fd: Int32, serial: Int, _ head: HTTPRequestHead, headLength: Int, _ outcome: TokenResolver.Outcome) {
        guard let connection = http[fd], connection.serial == serial, connection.awaitingToken else { return }
        connection.awaitingToken = false
        switch outcome {
        case .refuse(let error): refuseUpgrade(connection, error)
        case .proceed: upgrade(connection, head, headLength: headLength, tokenChecked: true)
        }
    }

    func refuseUpgrade(_ connection: HTTPConnection, _ error: StaffcastError) {
        logger.info("refused websocket", metadata: ["peer": "\(connection.peer)", "code": "\(error.code)"])
        metrics.error(code: error.code.rawValue)
        refuse(connection, .error(error), status: error.code.httpStatus)
    }
}
