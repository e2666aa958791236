import CLibWebSockets
import CStaffcastSocket
import Foundation
import StaffcastCore

/// HTTP on a service loop: accepting on its own descriptors, reading and writing plain sockets,
/// and carrying out what each connection's `HTTPConnectionMachine` asks (serve a request,
/// refuse one, check an upgrade's token, admit it as a WebSocket, flush, close).
/// The rules themselves (pipelining, keep-alive, deadlines, the upgrade's checks) are the
/// machine's, in StaffcastCore. Runs on the loop's thread only.
extension ServiceLoop {
    func serviceSockets() {
        guard let poller else { return }
        // Sends read in this turn (pipelined, or from many connections) start as one batch.
        runner.sends.hold()
        defer { runner.sends.release() }
        for ready in poller.poll() {
            if ready.fd == listenFD {
                acceptAll()
            } else if let connection = http[ready.fd] {
                // A socket in error or hung up whose reading is paused would be reported on
                // every turn, unread: nothing can reach its peer any more.
                if ready.failed, !connection.machine.wantsInput {
                    close(connection, reset: true)
                    continue
                }
                if ready.readable || ready.failed { read(connection) }
                if http[ready.fd] === connection, ready.writable { flush(connection) }
            } else if let socket = plainFramed[ready.fd] {
                plainReady(socket, ready)
            }
        }
    }

    func acceptAll() {
        var peer = [CChar](repeating: 0, count: 64)
        // Bounded per turn (the listening socket stays ready): the turn ends, which writes
        // live frames, before more of a storm is accepted.
        for _ in 0..<Self.acceptsPerTurn {
            let fd = sc_accept(listenFD, &peer, Int32(peer.count))
            if fd < 0 {
                if -fd == EMFILE || -fd == ENFILE || -fd == ENOBUFS || -fd == ENOMEM {
                    pauseAccepting(SocketError(operation: "accept", code: -fd))
                } else if -fd != EAGAIN && -fd != EWOULDBLOCK && -fd != EINTR && -fd != ECONNABORTED {
                    logger.warning("accept failed", metadata: ["error": "\(SocketError(operation: "accept", code: -fd))"])
                }
                return
            }
            let peerText = String(decoding: peer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if configuration.tlsEnabled {
                acceptTLS(fd, peer: peerText)
                continue
            }
            let connection = HTTPConnection(fd: fd, serial: nextSerial, peer: peerText, limits: httpLimits, now: Self.monotonicNow())
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

    /// Out of descriptors (or kernel memory): the listening socket stays ready, so accepting
    /// again at once would spin the loop and flood the log. It is not watched until the next
    /// tick (at most a second; `resumeAccepting`), which also bounds the log to one line a
    /// second per loop. Waiting clients stay in the kernel's backlog meanwhile.
    func pauseAccepting(_ error: SocketError) {
        guard !acceptPaused, listenFD >= 0 else { return }
        acceptPaused = true
        poller?.remove(listenFD)
        metrics.acceptPauses.increment()
        logger.warning("accept failed: not accepting for a second", metadata: [
            "error": "\(error)",
            "hint": "the process is out of file descriptors or memory; raise LimitNOFILE / ulimit -n, or lower max_connections",
        ])
    }

    /// On the tick: accept again after `pauseAccepting`.
    func resumeAccepting() {
        guard acceptPaused else { return }
        acceptPaused = false
        guard listenFD >= 0, !draining else { return }
        do { try poller?.add(listenFD) } catch { logger.error("cannot watch the listening socket again", metadata: ["error": "\(error)"]) }
    }

    func read(_ connection: HTTPConnection) {
        // Into the loop's read buffer: the machine copies what it keeps.
        let chunk = readBuffer
        while connection.machine.wantsInput, http[connection.fd] === connection {
            let n = sc_read(connection.fd, chunk.baseAddress, chunk.count)
            if n > 0 {
                perform(connection.machine.received(UnsafeRawBufferPointer(rebasing: chunk[0..<n]), now: Self.monotonicNow()), on: connection)
                if n < chunk.count { break }
            } else if n == 0 {
                perform(connection.machine.peerClosed(), on: connection)
                break
            } else if -n == EAGAIN || -n == EWOULDBLOCK || -n == EINTR {
                break
            } else {
                close(connection, reset: true)
                return
            }
        }
    }

    /// The limits every HTTP connection of this loop is held to.
    var httpLimits: HTTPConnectionLimits {
        HTTPConnectionLimits(headerTimeout: configuration.headerTimeout, idleTimeout: configuration.idleTimeout,
                             writeStallTimeout: configuration.writeStallTimeout)
    }

    /// Carries out what a connection's `HTTPConnectionMachine` asks, in order; stops once the
    /// connection is closed or handed over.
    func perform(_ actions: [HTTPConnectionAction], on connection: HTTPConnection) {
        // The sends served here start as one batch (nested in `serviceSockets`' hold, or alone
        // when serving resumes after answers or on a TLS connection).
        runner.sends.hold()
        defer { runner.sends.release() }
        for action in actions {
            guard http[connection.fd] === connection else { return }
            switch action {
            case .serve(let request, let slot, let keepAlive, let headOnly):
                serve(request, slot: slot, keepAlive: keepAlive, headOnly: headOnly, on: connection)
            case .refuse(let slot, let refusal):
                var response: HTTPResponse
                switch refusal.reason {
                case .framing(let e): response = .framing(e)
                case .error(let e): response = .error(e)
                }
                response.status = refusal.status
                perform(connection.machine.answered(slot: slot, response.serialized(keepAlive: false), now: Self.monotonicNow()),
                        on: connection)
            case .checkToken(let head):
                checkToken(head, of: connection)
            case .admit(let head):
                admit(head, connection)
            case .flush:
                flush(connection)
            case .stopReading:
                // Plain sockets are neither read (`wantsInput`) nor watched for input; TLS asks
                // libwebsockets.
                if let wsi = connection.tls { lws_rx_flow_control(wsi, 0) } else { watchInput(connection, false) }
            case .resumeReading:
                if let wsi = connection.tls { lws_rx_flow_control(wsi, 1) } else { watchInput(connection, true) }
            case .close(let reset):
                close(connection, reset: reset)
            }
        }
    }

    /// Hands a framed request to the API; its answer comes back to this loop for its slot. A
    /// token the table does not know yet is looked up first (off this thread); the slot keeps
    /// the pipeline in order meanwhile.
    func serve(_ request: HTTPRequest, slot: Int, keepAlive: Bool, headOnly: Bool, on connection: HTTPConnection) {
        let fd = connection.fd
        let serial = connection.serial
        let peer = connection.peer
        let serve: @Sendable (ServiceLoop, TokenResolver.Outcome) -> Void = { loop, outcome in
            var refusal: StaffcastError?
            if case .refuse(let e) = outcome { refusal = e }
            loop.api.handle(request, peer: peer, refusal: refusal, connection: serial << 8 | loop.index) { [weak loop] response in
                let bytes = response.serialized(keepAlive: keepAlive, headOnly: headOnly)
                // The answers lane: written between a long fan-out's writes, not after them.
                loop?.postAnswer { l in l.answer(fd: fd, serial: serial, slot: slot, bytes) }
            }
        }
        let check = resolver.check(request.head.bearerToken, peer: peer) { [weak self] outcome in
            self?.post { loop in serve(loop, outcome) }
        }
        if case .decided(let outcome) = check { serve(self, outcome) }
    }

    /// An answer is ready (on the loop's thread).
    func answer(fd: Int32, serial: Int, slot: Int, _ bytes: [UInt8]) {
        guard let connection = http[fd], connection.serial == serial else { return }
        perform(connection.machine.answered(slot: slot, bytes, now: Self.monotonicNow()), on: connection)
    }

    /// Writes what is ready, in order; the machine then closes a finished connection.
    func flush(_ connection: HTTPConnection) {
        guard http[connection.fd] === connection else { return }
        if let wsi = connection.tls { return flushTLS(connection, wsi) }
        while !connection.machine.output.isEmpty {
            let n = connection.machine.output.withUnsafeBytes { sc_write(connection.fd, $0.baseAddress, $0.count) }
            if n > 0 {
                connection.machine.wrote(n, now: Self.monotonicNow())
            } else if -n == EAGAIN || -n == EWOULDBLOCK || -n == EINTR {
                break
            } else {
                close(connection, reset: true)
                return
            }
        }
        let wantWrite = !connection.machine.output.isEmpty
        if wantWrite != connection.writeInterest {
            connection.writeInterest = wantWrite
            poller?.modify(connection.fd, readable: connection.readInterest, writable: wantWrite)
        }
        perform(connection.machine.flushed(held: wantWrite, now: Self.monotonicNow()), on: connection)
    }

    func watchInput(_ connection: HTTPConnection, _ readable: Bool) {
        guard readable != connection.readInterest else { return }
        connection.readInterest = readable
        poller?.modify(connection.fd, readable: readable, writable: connection.writeInterest)
    }

    /// Once a tick: the connection's deadlines. What waits to leave counts wherever it is:
    /// ours, libwebsockets' (TLS), and the kernel's send queue (`SIOCOUTQ`).
    func tick(_ connection: HTTPConnection, now: Double) {
        let elsewhere = Int(max(0, sc_send_queue(connection.fd))) + (tlsHoldsOutput(connection) ? 1 : 0)
        perform(connection.machine.tick(now: now, queuedElsewhere: elsewhere), on: connection)
    }

    func close(_ connection: HTTPConnection, reset: Bool) {
        guard http[connection.fd] === connection else { return }
        if let wsi = connection.tls { return closeTLS(connection, wsi, reset: reset) }
        http[connection.fd] = nil
        poller?.remove(connection.fd)
        if reset { sc_close_reset(connection.fd) } else { _ = sc_close(connection.fd) }
    }

    /// A WebSocket upgrade passed the machine's checks (path, draining, size): its token is
    /// checked from memory, or looked up off this thread (`TokenResolver`) while the
    /// connection waits, framing nothing; the lookup's own deadline ends the wait.
    func checkToken(_ head: HTTPRequestHead, of connection: HTTPConnection) {
        let fd = connection.fd
        let serial = connection.serial
        let check = resolver.check(head.bearerToken, peer: connection.peer) { [weak self] outcome in
            self?.post { loop in loop.tokenChecked(fd: fd, serial: serial, outcome) }
        }
        if case .decided(let outcome) = check { tokenChecked(connection, outcome) }
    }

    /// The token lookup of a waiting upgrade ended (on the loop's thread).
    func tokenChecked(fd: Int32, serial: Int, _ outcome: TokenResolver.Outcome) {
        guard let connection = http[fd], connection.serial == serial else { return }
        tokenChecked(connection, outcome)
    }

    func tokenChecked(_ connection: HTTPConnection, _ outcome: TokenResolver.Outcome) {
        switch outcome {
        case .refuse(let error):
            logRefusedUpgrade(connection, error)
            perform(connection.machine.tokenChecked(refusal: error), on: connection)
        case .proceed:
            perform(connection.machine.tokenChecked(refusal: nil), on: connection)
        }
    }

    /// The connection caps (`Gatekeeper.admit`): an admitted upgrade becomes a WebSocket
    /// (`upgrade`), a refused one gets its answer.
    func admit(_ head: HTTPRequestHead, _ connection: HTTPConnection) {
        switch gatekeeper.admit(token: head.bearerToken) {
        case .failure(let error):
            logRefusedUpgrade(connection, error)
            perform(connection.machine.upgradeRefused(error), on: connection)
        case .success(let admission):
            upgrade(connection, head, admission: admission)
        }
    }

    func logRefusedUpgrade(_ connection: HTTPConnection, _ error: StaffcastError) {
        logger.info("refused websocket", metadata: ["peer": "\(connection.peer)", "code": "\(error.code)"])
        metrics.error(code: error.code.rawValue)
    }
}
