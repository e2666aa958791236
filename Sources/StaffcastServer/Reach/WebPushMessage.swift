import Crypto
import Foundation
import StaffcastCore

/// One Web Push request body and its headers: the payload encrypted for one subscription with
/// `aes128gcm` (RFC 8291: ECDH on P-256 with a fresh key, HKDF-SHA256, AES-128-GCM, one record),
/// all through swift-crypto. Pure apart from the fresh key and salt it draws.
struct WebPushMessage {
    /// The record size written in the header; a payload must fit in one record.
    static let recordSize: UInt32 = 4_096
    /// The largest plaintext that fits one record (delimiter byte and tag included) under the
    /// 4,096-byte limit push services put on a body (86 bytes of header).
    static let maxPlaintext = 4_096 - 86 - 17

    enum Failure: Error, CustomStringConvertible {
        case badSubscriptionKey
        case badAuthSecret
        case tooLarge(Int)
        case crypto(Error)
        var description: String {
            switch self {
            case .badSubscriptionKey: return "the subscription's p256dh is not a P-256 public key"
            case .badAuthSecret: return "the subscription's auth secret is not 16 bytes"
            case .tooLarge(let n): return "a payload of \(n) bytes does not fit one push record"
            case .crypto(let e): return "encryption failed: \(e)"
            }
        }
    }

    /// Whether `p256dh` (base64url) is a point on P-256 that can be encrypted to: checked when a
    /// subscription is stored, so one that could never be pushed to is refused at once.
    static func isSubscriptionKey(_ p256dh: String) -> Bool {
        guard let bytes = Base64URL.decode(p256dh) else { return false }
        return (try? P256.KeyAgreement.PublicKey(x963Representation: bytes)) != nil
    }

    /// Encrypts `plaintext` for the subscription keys `p256dh` and `auth` (base64url).
    static func encrypt(_ plaintext: [UInt8], p256dh: String, auth: String,
                        senderKey: P256.KeyAgreement.PrivateKey = .init(),
                        salt: [UInt8] = (0..<16).map { _ in UInt8.random(in: 0...255) }) throws(Failure) -> [UInt8] {
        guard let uaPublicBytes = Base64URL.decode(p256dh),
              let uaPublic = try? P256.KeyAgreement.PublicKey(x963Representation: uaPublicBytes) else {
            throw .badSubscriptionKey
        }
        guard let authSecret = Base64URL.decode(auth), authSecret.count == 16 else { throw .badAuthSecret }
        guard plaintext.count <= maxPlaintext else { throw .tooLarge(plaintext.count) }
        let asPublic = [UInt8](senderKey.publicKey.x963Representation)
        do {
            let shared = try senderKey.sharedSecretFromKeyAgreement(with: uaPublic)
            // RFC 8291 §3.3: IKM = HKDF(auth_secret, ecdh_secret, "WebPush: info" 0x00 ua_public as_public, 32).
            let keyInfo = Array("WebPush: info".utf8) + [0] + uaPublicBytes + asPublic
            let ikm = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: authSecret, sharedInfo: keyInfo,
                                                     outputByteCount: 32)
            // RFC 8188 §2.2–2.3: the content key and nonce from the salt of this message.
            let cek = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt,
                                             info: Array("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
            let nonceKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt,
                                                  info: Array("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
            let nonce = try AES.GCM.Nonce(data: nonceKey.withUnsafeBytes { Array($0) })
            // One record, the last: the plaintext, then the delimiter 0x02 (no padding).
            let sealed = try AES.GCM.seal(plaintext + [2], using: cek, nonce: nonce)
            var body = salt
            body += withUnsafeBytes(of: recordSize.bigEndian) { Array($0) }
            body.append(UInt8(asPublic.count))
            body += asPublic
            body += sealed.ciphertext
            body += sealed.tag
            return body
        } catch {
            throw .crypto(error)
        }
    }

    /// The payload the app's service worker receives: `{"op":"message","message": Message}`;
    /// for a correction of one pushed before (sql/021) the WebSocket frame of that change,
    /// `{"op":"message_updated","message": Message}` or `{"op":"message_retracted","message_id","event_id"}`.
    /// A message too long for one push record has its text shortened (the app fetches the rest).
    static func payload(_ message: StaffMessage, correction: Correction? = nil) -> [UInt8] {
        let frame: (StaffMessage) -> ServerFrame
        switch correction {
        case nil: frame = { .message($0) }
        case .updated: frame = { .messageUpdated(ref: nil, message: $0) }
        case .retracted: return ServerFrame.messageRetracted(ref: nil, messageID: message.id, eventID: message.eventID).encoded()
        }
        var m = message
        var bytes = frame(m).encoded()
        var keep = m.message.count
        while bytes.count > maxPlaintext && keep > 0 {
            keep = keep * 3 / 4
            m.message = String(message.message.prefix(keep)) + "…"
            bytes = frame(m).encoded()
        }
        return bytes
    }
}
