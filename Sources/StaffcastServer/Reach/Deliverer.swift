import Crypto
import Foundation
import StaffcastCore
import StaffcastPostgres

/// Makes one attempt at one outbox item over the network, on a `DeliveryPool` thread: a Web Push
/// (RFC 8030 headers, RFC 8291 body, RFC 8292 VAPID), an email over SMTP, or a signed webhook
/// POST. Says only what happened (`AttemptResult`); `RetryPolicy` decides what follows.
struct Deliverer: Sendable {
    let configuration: ReachConfiguration
    let vapid: VAPIDKey?
    /// Where the app is (`…/app`), for the link in emails.
    let appURL: String
    /// Whether a token has ended (this server's token table, current within 2 s): a push
    /// claimed before its subscription's token was revoked is not sent after it.
    let tokenEnded: @Sendable (TokenDigest) -> Bool

    /// One attempt at `item` to `host`, through the calling thread's handle for that host.
    func attempt(_ item: OutboxItem, host: String, handles: CurlHandles) -> AttemptResult {
        do {
            let curl = try handles.handle(host: host)
            switch item.target {
            case .push(_, let endpoint, let p256dh, let auth, let token, let message, let correction):
                if let token, tokenEnded(token) {
                    return .withdrawn("not sent: the token that registered the subscription was revoked or expired")
                }
                return try push(curl, endpoint: endpoint, p256dh: p256dh, auth: auth, message: message, correction: correction,
                                giveUpAt: item.giveUpAt)
            case .email(let address, let name, let eventName, let message, let correction):
                return try email(curl, to: address, name: name, eventName: eventName, message: message, correction: correction,
                                 deliveryID: item.deliveryID)
            case .webhook(_, let url, let secret, let changeType, let payload):
                return try webhook(curl, url: url, secret: secret, changeType: changeType, payload: payload,
                                   deliveryID: item.deliveryID)
            }
        } catch let e as CurlEasy.TransportError {
            handles.discard(host: host)
            return .transportFailure(e.description)
        } catch {
            handles.discard(host: host)
            return .transportFailure("\(error)")
        }
    }

    private func push(_ curl: CurlEasy, endpoint: String, p256dh: String, auth: String, message: StaffMessage,
                      correction: Correction?, giveUpAt: Date) throws -> AttemptResult {
        guard let vapid else { return .transportFailure("push is not configured (push_vapid_key)") }
        let body: [UInt8]
        do {
            body = try WebPushMessage.encrypt(WebPushMessage.payload(message, correction: correction), p256dh: p256dh, auth: auth)
        } catch {
            // A subscription we cannot encrypt to will never work: the push service would refuse it too.
            return .status(400, retryAfterSeconds: nil)
        }
        let urgent = message.priority == .urgent || message.messageType == .emergency
        // TTL: until the message expires (or the outbox gives up), at most a day.
        let ttl = max(0, min(86_400, Int(giveUpAt.timeIntervalSinceNow)))
        let headers = [
            "Authorization: \(try vapid.authorization(endpoint: endpoint))",
            "Content-Encoding: aes128gcm",
            "Content-Type: application/octet-stream",
            "TTL: \(ttl)",
            "Urgency: \(urgent ? "high" : (message.priority == .low ? "low" : "normal"))",
            // One topic per message: a retry, or a correction (sql/021), replaces an undelivered
            // copy instead of adding one.
            "Topic: \(message.id.uuidString.replacingOccurrences(of: "-", with: "").lowercased())",
        ]
        // Checked again as the connection opens: the endpoint's name may lead elsewhere now
        // than when it was stored (`push_allow_private_hosts`).
        let response = try curl.post(url: endpoint, headers: headers, body: body,
                                     publicAddressesOnly: !configuration.allowPrivateHosts)
        return .status(response.status, retryAfterSeconds: response.retryAfter)
    }

    private func webhook(_ curl: CurlEasy, url: String, secret: String, changeType: String, payload: String, deliveryID: UUID) throws -> AttemptResult {
        let body = Array(payload.utf8)
        let signature = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Array(secret.utf8)))
        let hex = signature.map { String(format: "%02x", $0) }.joined()
        let headers = [
            "Content-Type: application/json",
            "User-Agent: staffcast-webhooks",
            "X-Staffcast-Delivery: \(deliveryID.wireText)",
            "X-Staffcast-Event: \(changeType)",
            "X-Staffcast-Signature: sha256=\(hex)",
        ]
        let response = try curl.post(url: url, headers: headers, body: body)
        // A redirect is not followed (the body is signed for this URL, and a receiver must not
        // lead the server elsewhere): say where it pointed, for the owner to fix the URL.
        let moved = (300..<400).contains(response.status)
            ? "redirects are not followed" + (response.location.map { "; Location: \($0)" } ?? "") : nil
        return .status(response.status, retryAfterSeconds: response.retryAfter, reply: moved)
    }

    private func email(_ curl: CurlEasy, to address: String, name: String, eventName: String, message: StaffMessage,
                       correction: Correction?, deliveryID: UUID) throws -> AttemptResult {
        guard let smtp = configuration.smtpURL, let from = configuration.emailFrom else {
            return .transportFailure("email is not configured (smtp_url, email_from)")
        }
        let text = EmailText.compose(from: from, to: address, name: name, eventName: eventName, message: message,
                                     correction: correction, appURL: appURL, messageID: "<\(deliveryID.wireText)@staffcast>")
        let answer = try curl.sendMail(url: smtp, user: nil, password: nil, from: from, to: [address], message: Array(text.utf8))
        return .status(answer.code, retryAfterSeconds: nil, reply: answer.reply)
    }
}
