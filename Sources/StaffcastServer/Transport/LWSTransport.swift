import CLibWebSockets
import Foundation
import Logging

/// Creates the libwebsockets context and owns the C memory it points into (the protocol
/// table, its name, the heartbeat policy) until `release()`, after `lws_context_destroy`.
/// The one place where lws return codes become errors for the rest of the server.
final class LWSTransport {
    static let subprotocol = "staffcast.v1"
    private unowned let server: StaffcastServer
    private var protocols: UnsafeMutablePointer<lws_protocols>?
    private var protocolName: UnsafeMutablePointer<CChar>?
    private var hostName: UnsafeMutablePointer<CChar>?
    private var vhostName: UnsafeMutablePointer<CChar>?
    private var retry: UnsafeMutablePointer<lws_retry_bo_t>?
    private(set) var failure: String?
    private(set) var listenPort = 0

    init(server: StaffcastServer) { self.server = server }

    func createContext() -> OpaquePointer? {
        let config = server.configuration
        lws_set_log_level(Int32(LLL_ERR | LLL_WARN), lwsLogEmit)

        protocolName = strdup(Self.subprotocol)
        protocols = .allocate(capacity: 2)
        protocols!.initialize(repeating: lws_protocols(), count: 2) // the zeroed second entry ends the table
        protocols![0].name = UnsafePointer(protocolName)
        protocols![0].callback = lwsCallback
        protocols![0].per_session_data_size = MemoryLayout<Int>.size
        protocols![0].rx_buffer_size = 16_384

        // Heartbeats are staffcast's own (StaffcastServer+Heartbeat), which measure round trips.
        // lws's "validity" timers are turned off (hangup 0): it re-inserts a timer into a sorted
        // list on every confirmation, which was a quarter of the service thread's time at 5,000
        // subscribers (perf: lws_dll2_add_sorted).
        retry = .allocate(capacity: 1)
        retry!.initialize(to: lws_retry_bo_t())
        retry!.pointee.secs_since_valid_ping = 0
        retry!.pointee.secs_since_valid_hangup = 0

        var info = lws_context_creation_info()
        info.options = UInt64(LWS_SERVER_OPTION_EXPLICIT_VHOSTS)
        info.user = Unmanaged.passUnretained(server).toOpaque()
        info.port = Int32(staffcast_lws_no_listen())
        info.protocols = UnsafePointer(protocols)
        info.timeout_secs = 10
        info.max_http_header_data = 8_192
        guard let ctx = lws_create_context(&info) else {
            failure = "libwebsockets could not create its context"
            return nil
        }

        var vinfo = lws_context_creation_info()
        vinfo.port = Int32(config.port)
        vinfo.protocols = UnsafePointer(protocols)
        vinfo.retry_and_idle_policy = UnsafePointer(retry)
        vinfo.timeout_secs = 10
        vinfo.max_http_header_data = 8_192
        vhostName = strdup("staffcast")
        vinfo.vhost_name = UnsafePointer(vhostName)
        if config.host != "0.0.0.0" && config.host != "" && config.host != "::" {
            hostName = strdup(config.host)
            vinfo.iface = UnsafePointer(hostName)
        }
        if !config.host.contains(":") {
            vinfo.options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6)
        }
        guard let vhost = lws_create_vhost(ctx, &vinfo) else {
            failure = "cannot listen on \(config.host):\(config.port): the port is in use or the address is not on this machine"
            lws_context_destroy(ctx)
            return nil
        }
        listenPort = Int(lws_get_vhost_listen_port(vhost))
        return ctx
    }

    /// Frees the C memory; call after `lws_context_destroy`.
    func release() {
        protocols?.deallocate()
        protocols = nil
        retry?.deallocate()
        retry = nil
        free(protocolName)
        free(hostName)
        free(vhostName)
        protocolName = nil
        hostName = nil
        vhostName = nil
    }

    // MARK: helpers for the service thread

    /// The value of header `token`, or nil when absent.
    static func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = lws_hdr_total_length(wsi, token)
        guard length > 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(length) + 1)
        let n = lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token)
        guard n >= 0 else { return nil }
        return String(decoding: buffer.prefix(Int(n)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// URL query parameters (`?a=1&b=2`); lws has already URL-decoded each fragment.
    static func query(_ wsi: OpaquePointer) -> [String: String] {
        var out: [String: String] = [:]
        var buffer = [CChar](repeating: 0, count: 4_097)
        var index: Int32 = 0
        while index < 64 {
            let n = lws_hdr_copy_fragment(wsi, &buffer, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS, index)
            if n < 0 { break }
            index += 1
            let text = String(decoding: buffer.prefix(Int(n)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard !text.isEmpty else { continue }
            if let eq = text.firstIndex(of: "=") {
                out[String(text[..<eq])] = String(text[text.index(after: eq)...])
            } else {
                out[text] = ""
            }
        }
        return out
    }

    static func method(_ wsi: OpaquePointer) -> String {
        let methods: [(lws_token_indexes, String)] = [
            (WSI_TOKEN_GET_URI, "GET"), (WSI_TOKEN_POST_URI, "POST"), (WSI_TOKEN_PUT_URI, "PUT"),
            (WSI_TOKEN_DELETE_URI, "DELETE"), (WSI_TOKEN_PATCH_URI, "PATCH"), (WSI_TOKEN_HEAD_URI, "HEAD"),
            (WSI_TOKEN_OPTIONS_URI, "OPTIONS"),
        ]
        for (token, name) in methods where lws_hdr_total_length(wsi, token) > 0 { return name }
        return "GET"
    }

    static func peer(_ wsi: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        guard let p = lws_get_peer_simple(wsi, &buffer, buffer.count) else { return "?" }
        return String(cString: p)
    }

    /// The bearer token of a request: `Authorization: Bearer …`, or `?access_token=…`.
    static func bearerToken(_ wsi: OpaquePointer, query: [String: String]) -> String? {
        if let auth = header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION) {
            let parts = auth.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
            return ""
        }
        return query["access_token"]
    }

    /// Writes a whole HTTP response (headers and body) and finishes the transaction.
    /// Returns what the callback must return.
    static func writeResponse(_ wsi: OpaquePointer, _ response: HTTPResponse, headOnly: Bool,
                              completeTransaction: Bool = true) -> Int32 {
        let pre = staffcast_lws_pre()
        var headers = [UInt8](repeating: 0, count: pre + 1_024)
        let status = headers.withUnsafeMutableBufferPointer { buf -> Int32 in
            let start = buf.baseAddress! + pre
            var p: UnsafeMutablePointer<UInt8>? = start
            let end = buf.baseAddress! + buf.count - 1
            if lws_add_http_common_headers(wsi, UInt32(response.status), response.contentType,
                                           lws_filepos_t(response.body.count), &p, end) != 0 { return -1 }
            for (name, value) in [("cache-control:", "no-store")] {
                if lws_add_http_header_by_name(wsi, name, value, Int32(value.utf8.count), &p, end) != 0 { return -1 }
            }
            return lws_finalize_write_http_header(wsi, start, &p, end)
        }
        if status != 0 { return -1 }
        if !headOnly && !response.body.isEmpty {
            let frame = OutFrame(response.body)
            let n = lws_write(wsi, frame.payload, frame.length, LWS_WRITE_HTTP_FINAL)
            if n < 0 { return -1 }
        }
        guard completeTransaction else { return 0 }
        return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
    }
}

private let lwsLogger = Logger(label: "staffcast.lws")

/// Sends libwebsockets' own warnings and errors into swift-log.
private func lwsLogEmit(_ level: Int32, _ line: UnsafePointer<CChar>?) {
    guard let line else { return }
    let text = String(cString: line).trimmingCharacters(in: .whitespacesAndNewlines)
    if level & Int32(LLL_ERR) != 0 {
        lwsLogger.error("\(text)")
    } else {
        lwsLogger.warning("\(text)")
    }
}

/// The protocol callback lws calls on the service thread; hands everything to the server
/// found through the context's user pointer.
private func lwsCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                         _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let ctx = lws_get_context(wsi), let raw = lws_context_user(ctx) else { return 0 }
    let server = Unmanaged<StaffcastServer>.fromOpaque(raw).takeUnretainedValue()
    return server.handle(wsi, reason, user, input, length)
}
