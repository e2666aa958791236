import Crypto
import Foundation
import StaffcastCore

/// The server's VAPID key (RFC 8292): a P-256 private key in a PEM file (`push_vapid_key`), made
/// on first start when the file is absent (mode 0600). Signs the JWT each push carries; its public
/// half is the application server key browsers subscribe with (`GET /v1/push/key`).
// @unchecked: swift-crypto does not mark its keys Sendable; this one is immutable after load.
struct VAPIDKey: @unchecked Sendable {
    let privateKey: P256.Signing.PrivateKey
    /// `sub` of every JWT: a mailto: or https: URL where the push service can reach the operator.
    let contact: String

    enum Failure: Error, CustomStringConvertible {
        case unreadable(path: String, cause: Error)
        case notAKey(path: String, cause: Error)
        case cannotCreate(path: String, cause: Error)
        var description: String {
            switch self {
            case .unreadable(let p, let e): return "cannot read push_vapid_key \(p): \(e)"
            case .notAKey(let p, let e): return "push_vapid_key \(p) is not a PEM P-256 private key: \(e)"
            case .cannotCreate(let p, let e): return "cannot create push_vapid_key \(p): \(e)"
            }
        }
    }

    /// Reads the key at `path`, or makes and saves a new one when there is no file.
    static func loadOrCreate(path: String, contact: String) throws(Failure) -> VAPIDKey {
        if FileManager.default.fileExists(atPath: path) {
            let text: String
            do { text = try String(contentsOfFile: path, encoding: .utf8) } catch { throw .unreadable(path: path, cause: error) }
            do {
                return VAPIDKey(privateKey: try P256.Signing.PrivateKey(pemRepresentation: text), contact: contact)
            } catch {
                throw .notAKey(path: path, cause: error)
            }
        }
        let key = P256.Signing.PrivateKey()
        do {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            guard FileManager.default.createFile(atPath: path, contents: Data(key.pemRepresentation.utf8),
                                                 attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteUnknown)
            }
        } catch {
            throw .cannotCreate(path: path, cause: error)
        }
        return VAPIDKey(privateKey: key, contact: contact)
    }

    /// The application server key: the uncompressed public point, base64url.
    var publicKey: String { Base64URL.encode(privateKey.publicKey.x963Representation) }

    /// The `Authorization` header for a push to `endpoint`: `vapid t=JWT, k=KEY` with the JWT's
    /// `aud` the endpoint's origin, `exp` 12 h from `now` (RFC 8292 allows at most 24 h), `sub` the contact.
    func authorization(endpoint: String, now: Date = Date()) throws -> String {
        guard let url = URL(string: endpoint), let scheme = url.scheme, let host = url.host else {
            throw StaffcastError.invalid("push endpoint \(endpoint.prefix(80)) is not a URL")
        }
        let origin = "\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? "")
        let header = #"{"typ":"JWT","alg":"ES256"}"#
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let claimsJSON = try encoder.encode(Claims(aud: origin, exp: Int(now.timeIntervalSince1970) + 12 * 3_600, sub: contact))
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(claimsJSON)
        let signature = try privateKey.signature(for: Data(signingInput.utf8))
        return "vapid t=\(signingInput).\(Base64URL.encode(signature.rawRepresentation)), k=\(publicKey)"
    }

    /// The JWT's claims (RFC 8292).
    private struct Claims: Encodable {
        var aud: String
        var exp: Int
        var sub: String
    }
}
