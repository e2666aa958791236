import CLibWebSockets
import Foundation
import Logging

/// One libwebsockets context with one vhost that listens on nothing and serves the sockets
/// its service loop adopts. Owns the C memory the context points into (protocol table and its
/// names, the heartbeat policy) and frees it after `lws_context_destroy`, in `deinit`; with
/// `event_loop: ev` it also owns the libev loop the context runs on (`evLoop`), destroyed right
/// after the context (libwebsockets stops its watchers on it while it destroys), and the
/// prepare watcher that ends each of its turns (`turnWatcher`, freed with the loop).
///
/// With libev, `serve` blocks in `ev_run`: the kernel's epoll reports the ready sockets, where
/// libwebsockets' poll() passes and scans every descriptor on every wake-up. Everything else is
/// the same: `lws_cancel_service` wakes the loop through libwebsockets' eventfd (a libev watcher
/// now), timers (`lws_set_timeout`, libwebsockets' sul) run from libev's idle and timer
/// watchers, and destruction is synchronous (one `lws_context_destroy`, checked through
/// `info.pcontext`). Every call happens on the service thread, except `wake`.
///
/// The one place where libwebsockets' return codes become errors (`SocketError`); everything
/// else in staffcast that calls libwebsockets lives in `ServiceLoop`.
final class LWSContext {
    static let subprotocol = "staffcast.v1"
    private(set) var context: OpaquePointer?
    private(set) var vhost: OpaquePointer?
    /// The vhost that holds the certificate, when TLS is configured: accepted sockets are
    /// adopted there as raw TLS sockets (`ServiceLoop+TLS`, `ServiceLoop+FramedWebSockets`); plain
    /// connections never reach libwebsockets (the loop's epoll set, `vhost`'s raw file).
    private(set) var tlsVhost: OpaquePointer?
    private let protocols: UnsafeMutablePointer<lws_protocols>
    private let protocolName: UnsafeMutablePointer<CChar>
    private let vhostName: UnsafeMutablePointer<CChar>
    private let tlsVhostName: UnsafeMutablePointer<CChar>
    /// The ALPN list the TLS vhost offers (libwebsockets keeps the pointer): HTTP/1.1 only, as
    /// the HTTP front speaks nothing else (lws would offer h2 and clients would take it).
    private let alpn: UnsafeMutablePointer<CChar>
    private let retry: UnsafeMutablePointer<lws_retry_bo_t>
    /// The libev loop the context runs on (`event_loop: ev`); nil with libwebsockets' poll().
    private var evLoop: OpaquePointer?
    /// Set to nil by libwebsockets once `lws_context_destroy` has wholly finished (`info.pcontext`).
    private let destroyed: UnsafeMutablePointer<OpaquePointer?>

    /// The prepare watcher that ends each turn of the libev loop (`ServiceLoop.turnEnded`);
    /// nil with libwebsockets' poll(), where `serve` calls it after each `lws_service`.
    private var turnWatcher: UnsafeMutablePointer<staffcast_turn_watcher>?
    /// The context's user pointer (the service loop, unretained: the loop owns this context).
    private let user: UnsafeMutableRawPointer?

    /// Creates the context on the calling thread, which becomes its service thread.
    /// `loop` receives every callback (through the context's user pointer).
    convenience init(loop: ServiceLoop) throws(SocketError) {
        try self.init(user: Unmanaged.passUnretained(loop).toOpaque(), tls: loop.configuration)
    }

    /// `user` receives the callbacks (nil: a context only to check the TLS files).
    private init(user: UnsafeMutableRawPointer?, tls configuration: ServerConfiguration) throws(SocketError) {
        self.user = user
        lws_set_log_level(Int32(LLL_ERR | LLL_WARN), lwsLogEmit)
        protocolName = strdup(Self.subprotocol)
        vhostName = strdup("staffcast")
        tlsVhostName = strdup("staffcast-tls")
        alpn = strdup("http/1.1")
        protocols = .allocate(capacity: 2)
        protocols.initialize(repeating: lws_protocols(), count: 2) // the zeroed second entry ends the table
        protocols[0].name = UnsafePointer(protocolName)
        protocols[0].callback = lwsCallback
        // No per-connection memory of libwebsockets' own: every socket here is a raw one, whose
        // reads land in the context's shared buffer; staffcast keeps its state per WebSocket
        // (`FramedWebSocket`).
        protocols[0].per_session_data_size = 0
        protocols[0].rx_buffer_size = 0

        // Heartbeats are the engine's own, which measure round trips. lws's "validity" timers are
        // off (hangup 0): it re-inserts a timer into a sorted list on every confirmation, which
        // was a quarter of the service thread at 5,000 subscribers (perf: lws_dll2_add_sorted).
        retry = .allocate(capacity: 1)
        retry.initialize(to: lws_retry_bo_t())
        retry.pointee.secs_since_valid_ping = 0
        retry.pointee.secs_since_valid_hangup = 0
        destroyed = .allocate(capacity: 1)
        destroyed.initialize(to: nil)

        var info = lws_context_creation_info()
        info.options = UInt64(LWS_SERVER_OPTION_EXPLICIT_VHOSTS)
        if configuration.tlsEnabled { info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT) }
        info.user = user
        info.port = Int32(staffcast_lws_no_listen())
        info.protocols = UnsafePointer(protocols)
        info.timeout_secs = 10
        info.fd_limit_per_thread = 0
        info.pcontext = destroyed
        // The TLS check's throwaway context (no user) never serves: no loop for it.
        if user != nil, configuration.eventLoop == .ev {
            guard let made = staffcast_ev_loop_new() else {
                throw SocketError(operation: "libev could not create an epoll event loop", code: errno)
            }
            evLoop = made
            guard let watcher = staffcast_ev_turn_new(lwsTurnEnded, user) else {
                ev_loop_destroy(made)
                evLoop = nil
                throw SocketError(operation: "out of memory for the event loop's turn watcher", code: ENOMEM)
            }
            turnWatcher = watcher
            info.options |= UInt64(LWS_SERVER_OPTION_LIBEV)
        }
        var foreign: [UnsafeMutableRawPointer?] = [evLoop.map { UnsafeMutableRawPointer($0) }]
        let created = foreign.withUnsafeMutableBufferPointer { loops -> OpaquePointer? in
            if evLoop != nil { info.foreign_loops = loops.baseAddress } // read only while creating
            return lws_create_context(&info)
        }
        guard let ctx = created else {
            if let evLoop { ev_loop_destroy(evLoop) }
            evLoop = nil
            throw SocketError(operation: "libwebsockets could not create its context" + (configuration.eventLoop == .ev
                ? " on libev (is libwebsockets' libev plugin, package libwebsockets-evlib-ev, installed? event_loop: poll does without it)"
                : ""), code: 0)
        }
        context = ctx
        destroyed.pointee = ctx

        var vinfo = lws_context_creation_info()
        vinfo.port = Int32(staffcast_lws_no_listen_server())
        vinfo.protocols = UnsafePointer(protocols)
        vinfo.retry_and_idle_policy = UnsafePointer(retry)
        vinfo.timeout_secs = 10
        vinfo.vhost_name = UnsafePointer(vhostName)
        guard let vh = lws_create_vhost(ctx, &vinfo) else {
            destroy()
            throw SocketError(operation: "libwebsockets could not create its vhost", code: 0)
        }
        vhost = vh

        if let certificate = configuration.tlsCertificate, let key = configuration.tlsKey {
            var tinfo = vinfo
            tinfo.vhost_name = UnsafePointer(tlsVhostName)
            tinfo.options = UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
            tinfo.ssl_options_set = staffcast_tls_old_versions_off() // TLS 1.2 and later
            tinfo.alpn = UnsafePointer(alpn)
            let made = certificate.withCString { cert in
                key.withCString { keyPath in
                    tinfo.ssl_cert_filepath = cert
                    tinfo.ssl_private_key_filepath = keyPath
                    return lws_create_vhost(ctx, &tinfo) // reads both files now; keeps nothing of the paths
                }
            }
            guard let made else {
                destroy()
                throw SocketError(operation: "TLS: the certificate or key was refused (tls_cert \(certificate), tls_key \(key)): "
                    + "each must be a readable PEM file, and the key must belong to the certificate", code: 0)
            }
            tlsVhost = made
        }
    }

    /// Loads the certificate and key the way the server will (a throwaway context), so that a
    /// bad pair is a configuration error at start and in `--check-config`.
    static func checkTLS(_ configuration: ServerConfiguration) throws(SocketError) {
        guard configuration.tlsEnabled else { return }
        let probe = try LWSContext(user: nil, tls: configuration)
        probe.destroy()
    }

    /// Serves on the calling (service) thread until `keepGoing` is false after a wake-up or
    /// `interrupt`. Returns early only if libwebsockets gives up (nothing left to watch).
    /// The loop's `turnEnded` runs on this thread after every turn (all of the turn's callbacks
    /// have run), before the loop waits again.
    func serve(while keepGoing: () -> Bool) {
        if let evLoop, let turnWatcher {
            // A prepare watcher: libev runs it once per turn, before it blocks in epoll.
            staffcast_ev_turn_start(evLoop, turnWatcher)
            defer { staffcast_ev_turn_stop(evLoop, turnWatcher) }
            while keepGoing() {
                if staffcast_ev_run(evLoop) == 0 { return } // no watcher left: lws has stopped
            }
        } else {
            while keepGoing(), let context {
                if lws_service(context, 0) < 0 { return }
                lwsTurnEnded(user) // lws_service returns after each turn
            }
        }
    }

    /// Makes `serve` look at its condition again once the running callback returns; call from
    /// a callback on the service thread (lws_service returns after each turn by itself).
    func interrupt() {
        if let evLoop { staffcast_ev_break(evLoop) }
    }

    /// Closes every connection at once and frees the context, then the libev loop; call on its
    /// service thread, outside `serve`.
    func destroy() {
        if let context {
            lws_context_destroy(context)
            // With a foreign libev loop libwebsockets finishes in that one call (its watchers
            // are stopped synchronously); if it ever did not, the loop must outlive it: keep it.
            if destroyed.pointee != nil {
                lwsLogger.error("libwebsockets did not finish destroying its context; its event loop is kept")
                evLoop = nil
                turnWatcher = nil // stopped, but registered with the kept loop: kept too
            }
        }
        if let evLoop { ev_loop_destroy(evLoop) }
        evLoop = nil
        if let turnWatcher { staffcast_ev_turn_free(turnWatcher) }
        turnWatcher = nil
        context = nil
        vhost = nil
        tlsVhost = nil
    }

    deinit {
        destroy()
        destroyed.deallocate()
        protocols.deallocate()
        retry.deallocate()
        free(protocolName)
        free(vhostName)
        free(tlsVhostName)
        free(alpn)
    }

    /// Watches `fd` (the loop's epoll set) for readability: LWS_CALLBACK_RAW_RX_FILE.
    func watch(_ fd: Int32) throws(SocketError) {
        guard let vhost, staffcast_lws_adopt_file(vhost, fd, protocolName) != nil else {
            throw SocketError(operation: "libwebsockets could not watch the loop's descriptors", code: 0)
        }
    }

    /// Adopts an accepted socket as a raw socket on the TLS vhost: libwebsockets does the
    /// handshake, then hands over decrypted bytes. Returns its wsi; on failure libwebsockets
    /// has closed `fd`.
    func adoptTLS(_ fd: Int32) throws(SocketError) -> OpaquePointer {
        guard let tlsVhost, let wsi = staffcast_lws_adopt_raw_socket(tlsVhost, fd, protocolName, 1) else {
            throw SocketError(operation: "libwebsockets refused the TLS connection", code: 0)
        }
        return wsi
    }

    /// Wakes the service thread (from any thread) into LWS_CALLBACK_EVENT_WAIT_CANCELLED.
    static func wake(_ context: UInt) {
        if let ctx = OpaquePointer(bitPattern: context) { lws_cancel_service(ctx) }
    }

    /// The peer's address as text.
    static func peer(_ wsi: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        guard let p = lws_get_peer_simple(wsi, &buffer, buffer.count) else { return "?" }
        return String(cString: p)
    }
}

private let lwsLogger = Logger(label: "staffcast.lws")

/// Sends libwebsockets' own warnings and errors into swift-log.
private func lwsLogEmit(_ level: Int32, _ line: UnsafePointer<CChar>?) {
    guard let line else { return }
    let text = String(cString: line).trimmingCharacters(in: .whitespacesAndNewlines)
    if text.isEmpty { return }
    if level & Int32(LLL_ERR) != 0 {
        lwsLogger.error("\(text)")
    } else {
        lwsLogger.warning("\(text)")
    }
}

/// The end of a turn of the service loop found through `user` (the context's user pointer).
private func lwsTurnEnded(_ user: UnsafeMutableRawPointer?) {
    guard let user else { return }
    Unmanaged<ServiceLoop>.fromOpaque(user).takeUnretainedValue().turnEnded()
}

/// The protocol callback lws calls on a service thread; hands everything to the loop found
/// through the context's user pointer.
private func lwsCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                         _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let ctx = lws_get_context(wsi), let raw = lws_context_user(ctx) else {
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
    let loop = Unmanaged<ServiceLoop>.fromOpaque(raw).takeUnretainedValue()
    return loop.handle(wsi, reason, user, input, length)
}
