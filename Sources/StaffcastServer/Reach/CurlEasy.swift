import CLibCurl
import Foundation
import StaffcastCore

/// Outgoing requests through libcurl (HTTPS POST for Web Push and webhooks, SMTP for email),
/// one at a time. This type is the only user of libcurl in staffcast: it owns its `CURL` handle,
/// header lists and error buffer and frees them in `deinit`. Owned by one `DeliveryPool` thread
/// (never a service loop or a database worker), which it blocks for at most `timeout` seconds a
/// request; it is reused for the same host so the connection is kept.
final class CurlEasy {
    /// What came back from an HTTP request.
    struct Response: Sendable {
        var status: Int
        /// At most the first 16 KiB (for error messages).
        var body: [UInt8]
        /// Seconds from a `Retry-After` header, if any.
        var retryAfter: Double?
        /// A redirect's `Location` header, if any (redirects are not followed).
        var location: String?
    }

    /// A request that got no answer: the libcurl code and its sentence.
    struct TransportError: Error, CustomStringConvertible {
        var code: Int
        var message: String
        var description: String { "\(message) (curl \(code))" }
    }

    private let handle: UnsafeMutableRawPointer
    private var headers: UnsafeMutablePointer<curl_slist>?
    private var recipients: UnsafeMutablePointer<curl_slist>?
    /// Buffers libcurl reads from and writes into through the callbacks below (kept alive by self).
    private let io = IO()
    /// libcurl writes its error sentence here (it keeps the pointer, so it must not move).
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    final class IO {
        var received: [UInt8] = []
        var upload: [UInt8] = []
        var uploaded = 0
        var retryAfter: Double?
        var location: String?
        /// The SMTP server's last refusal (a 4xx or 5xx reply line; libcurl passes replies to
        /// the header callback too, and a QUIT's "221" follows it), at most 300 bytes.
        var refusal: String?
    }

    /// libcurl's global state, made once before any handle (it is not thread-safe itself).
    private static let initialised: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    private let timeout: Double
    private let caFile: String?
    private var used = false

    init(timeout: Double, caFile: String?) throws(TransportError) {
        guard Self.initialised, let h = curl_easy_init() else {
            errorBuffer.deallocate()
            throw TransportError(code: -1, message: "libcurl could not be initialised")
        }
        handle = h
        self.timeout = timeout
        self.caFile = caFile
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    /// Readies the handle for the next request: everything of the last one is forgotten
    /// (`curl_easy_reset`) except its open connection, so the next request to the same host
    /// skips the TCP and TLS handshakes. `publicAddressesOnly`: a connection to a loopback,
    /// private or link-local address (`DeliveryHostRule.isPrivate`) is refused when it is
    /// opened, whatever the name resolved to when it was stored (a name can be pointed at
    /// the private network later).
    private func prepare(publicAddressesOnly: Bool = false) {
        if used {
            curl_easy_reset(handle)
            if let headers { curl_slist_free_all(headers) }
            if let recipients { curl_slist_free_all(recipients) }
            headers = nil
            recipients = nil
            io.received = []
            io.upload = []
            io.uploaded = 0
            io.retryAfter = nil
            io.location = nil
            io.refusal = nil
            errorBuffer.update(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        }
        used = true
        let ms = Int(max(timeout, 1) * 1000)
        staffcast_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        staffcast_curl_set_long(handle, CURLOPT_TIMEOUT_MS, ms)
        staffcast_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, min(ms, 10_000))
        staffcast_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        staffcast_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https,smtp,smtps")
        if let caFile { staffcast_curl_set_string(handle, CURLOPT_CAINFO, caFile) }
        staffcast_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer)
        if publicAddressesOnly {
            staffcast_curl_set_opensocket(handle) { _, _, address in
                guard let address else { return staffcast_curl_socket_bad() }
                var bytes = [UInt8](repeating: 0, count: 16)
                let n = Int(staffcast_curl_address_bytes(address, &bytes))
                guard n > 0, !DeliveryHostRule.isPrivate(Array(bytes.prefix(n))) else { return staffcast_curl_socket_bad() }
                return staffcast_curl_open_socket(address)
            }
        }
        let me = Unmanaged.passUnretained(io).toOpaque()
        staffcast_curl_set_callback(handle, CURLOPT_WRITEFUNCTION) { ptr, size, count, user in
            guard let ptr, let user else { return 0 }
            let io = Unmanaged<IO>.fromOpaque(user).takeUnretainedValue()
            let n = size * count
            if io.received.count < 16_384 {
                io.received.append(contentsOf: UnsafeRawBufferPointer(start: ptr, count: min(n, 16_384 - io.received.count)))
            }
            return n
        }
        staffcast_curl_set_pointer(handle, CURLOPT_WRITEDATA, me)
        staffcast_curl_set_callback(handle, CURLOPT_HEADERFUNCTION) { ptr, size, count, user in
            guard let ptr, let user else { return 0 }
            let n = size * count
            let line = String(decoding: UnsafeRawBufferPointer(start: ptr, count: min(n, 2_048)), as: UTF8.self)
            let io = Unmanaged<IO>.fromOpaque(user).takeUnretainedValue()
            let lower = line.lowercased()
            if lower.hasPrefix("retry-after:") {
                io.retryAfter = Double(line.dropFirst("retry-after:".count).trimmingCharacters(in: .whitespacesAndNewlines))
            } else if lower.hasPrefix("location:") {
                io.location = String(line.dropFirst("location:".count).trimmingCharacters(in: .whitespacesAndNewlines).prefix(300))
            }
            if let first = line.utf8.first, first == UInt8(ascii: "4") || first == UInt8(ascii: "5"),
               line.utf8.count >= 3, line.utf8.prefix(3).allSatisfy({ (0x30...0x39).contains($0) }) {
                io.refusal = String(line.trimmingCharacters(in: .whitespacesAndNewlines).prefix(300))
            }
            return n
        }
        staffcast_curl_set_pointer(handle, CURLOPT_HEADERDATA, me)
        staffcast_curl_set_callback(handle, CURLOPT_READFUNCTION) { ptr, size, count, user in
            guard let ptr, let user else { return 0 }
            let io = Unmanaged<IO>.fromOpaque(user).takeUnretainedValue()
            let n = min(size * count, io.upload.count - io.uploaded)
            guard n > 0 else { return 0 }
            io.upload.withUnsafeBytes { src in
                guard let base = src.baseAddress else { return }
                UnsafeMutableRawPointer(ptr).copyMemory(from: base + io.uploaded, byteCount: n)
            }
            io.uploaded += n
            return n
        }
        staffcast_curl_set_pointer(handle, CURLOPT_READDATA, me)
    }

    deinit {
        curl_easy_cleanup(handle)
        if let headers { curl_slist_free_all(headers) }
        if let recipients { curl_slist_free_all(recipients) }
        errorBuffer.deallocate()
    }

    /// POSTs `body` to `url` with `headers` ("Name: value"); returns the status whatever it is.
    /// `publicAddressesOnly`: see `prepare`.
    func post(url: String, headers lines: [String], body: [UInt8], publicAddressesOnly: Bool = false) throws(TransportError) -> Response {
        prepare(publicAddressesOnly: publicAddressesOnly)
        for line in lines { headers = curl_slist_append(headers, line) }
        // No "Expect: 100-continue" round trip before small bodies.
        headers = curl_slist_append(headers, "Expect:")
        staffcast_curl_set_string(handle, CURLOPT_URL, url)
        staffcast_curl_set_slist(handle, CURLOPT_HTTPHEADER, headers)
        staffcast_curl_set_long(handle, CURLOPT_POST, 1)
        io.upload = body
        staffcast_curl_set_size(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
        try perform()
        return Response(status: staffcast_curl_response_code(handle), body: io.received, retryAfter: io.retryAfter,
                        location: io.location)
    }

    /// Sends one email (`message`: the whole RFC 5322 text, CRLF line ends) through the SMTP
    /// server of `url` (smtp://host:port or smtps://), upgrading with STARTTLS when it is offered.
    /// Returns the SMTP reply code of the final answer (250 when accepted) and, for a refusal,
    /// the server's reply line (its reason, for the log and the outbox).
    func sendMail(url: String, user: String?, password: String?, from: String, to: [String], message: [UInt8])
        throws(TransportError) -> (code: Int, reply: String?) {
        prepare()
        staffcast_curl_set_string(handle, CURLOPT_URL, url)
        staffcast_curl_set_long(handle, CURLOPT_USE_SSL, Int(CURLUSESSL_TRY.rawValue))
        if let user { staffcast_curl_set_string(handle, CURLOPT_USERNAME, user) }
        if let password { staffcast_curl_set_string(handle, CURLOPT_PASSWORD, password) }
        staffcast_curl_set_string(handle, CURLOPT_MAIL_FROM, "<\(from)>")
        for address in to { recipients = curl_slist_append(recipients, "<\(address)>") }
        staffcast_curl_set_slist(handle, CURLOPT_MAIL_RCPT, recipients)
        staffcast_curl_set_long(handle, CURLOPT_UPLOAD, 1)
        io.upload = message
        do {
            try perform()
        } catch {
            // A refusal by the server is an answer (its code decides retry or not), not a lost connection.
            let code = staffcast_curl_response_code(handle)
            if code >= 400 { return (code, io.refusal ?? error.message) }
            throw error
        }
        let code = staffcast_curl_response_code(handle)
        return (code == 0 ? 250 : code, nil)
    }

    private func perform() throws(TransportError) {
        let result = curl_easy_perform(handle)
        guard result == CURLE_OK else {
            let bytes = UnsafeBufferPointer(start: errorBuffer, count: Int(CURL_ERROR_SIZE)).prefix { $0 != 0 }
            let detail = String(decoding: bytes.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let general = curl_easy_strerror(result).map { String(cString: $0) } ?? "libcurl error"
            throw TransportError(code: Int(result.rawValue), message: detail.isEmpty ? general : detail)
        }
    }
}
