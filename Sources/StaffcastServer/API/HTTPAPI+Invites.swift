import Foundation
import StaffcastCore
import StaffcastPostgres
import StaffcastQR

/// Invite routes (docs/protocol.md, Invites): create (admin or owner, as themselves under
/// row-level security), revoke, and redeem (no token; limited per client address).
extension HTTPAPI {
    func invites(_ route: HTTPRoute, _ request: HTTPRequest, peer: String, bearer token: String?, _ respond: @escaping Respond) {
        let head = request.head
        switch route {
        case .createInvite(let eventID):
            guard let invite: InviteRequest = decoded(respond, try InviteRequest.decode(eventID: eventID, body: request.body)) else { return }
            let base = Self.publicBase(head)
            let wantsQR = head.query["qr"] == "svg"
            runAsUser(token, respond) { store, identity in
                let created = try store.createInvite(as: identity.userID, invite, base: base)
                self.redeemLimiter.withLock { $0.remember(code: created.code) }
                guard wantsQR else { return .json(201, created) }
                // The console shows the code as an image it cannot draw itself (no outside script).
                return .json(201, CreatedInviteWithQR(invite: created, qrSVG: (try? QRCode(created.url))?.svg()))
            }
        case .revokeInvite(let code):
            runAsUser(token, respond) { store, identity in
                let event = try store.revokeInvite(as: identity.userID, code: code)
                return .json(200, InviteRevokedBody(code: code, eventID: event))
            }
        case .redeemInvite(let code):
            // A malformed code costs no lookup, so it costs the address no try either.
            guard InviteURL.looksLikeCode(code) else {
                respond(.error(.notFound("There is no such invite; check the link (it is /join/ and 22 characters).")))
                return
            }
            guard let name: String = decoded(respond, try RedeemRequest.decode(request.body)) else { return }
            guard acceptsRequests(respond) else { return }
            let admission = redeemLimiter.withLock { $0.admit(peer, code: code, now: ServiceLoop.monotonicNow()) }
            guard admission != .refused else {
                respond(redeemRefused())
                return
            }
            runAsServer({ response in
                // Only a wrong code (404, 410) keeps its try spent; a bad name or overload judged no code.
                let outcome: RedeemLimiter.Outcome = response.status == 201 ? .redeemed
                    : response.status == 404 || response.status == 410 ? .wrongCode : .notJudged
                self.redeemLimiter.withLock { $0.settle(admission, address: peer, code: code, outcome, now: ServiceLoop.monotonicNow()) }
                respond(response)
            }) { store in
                .json(201, try store.redeemInvite(code: code, displayName: name))
            }
        default:
            respond(.error(.notFound("There is no such route.")))
        }
    }

    /// 429 for an address out of wrong-code tries: what happened and what to do.
    private func redeemRefused() -> HTTPResponse {
        let (wait, burst) = redeemLimiter.withLock { ($0.retryAfterSeconds, Int($0.burst)) }
        var response = HTTPResponse.error(StaffcastError(.rateLimited,
            "Too many wrong or expired invite codes were tried from your address (\(burst), then one per \(wait) s). "
            + "Check that the link is complete (/join/ and 22 characters) and try again in \(wait) s; "
            + "if it still fails, ask the organiser for a new link."))
        response.headers.append((name: "retry-after", value: "\(wait)"))
        return response
    }

    /// The scheme and host the client used to reach this server, for join URLs: the
    /// browser's `Origin` when it sent one, else `http://` and the `Host` header.
    static func publicBase(_ head: HTTPRequestHead) -> String {
        if let origin = head.header("origin"), origin.hasPrefix("http://") || origin.hasPrefix("https://") {
            return origin
        }
        return "http://" + (head.header("host") ?? "127.0.0.1")
    }
}

/// `201` of `POST …/invites?qr=svg`: the Invite plus `qr_svg`, the join URL as an SVG image.
struct CreatedInviteWithQR: Encodable {
    var invite: Invite
    var qrSVG: String?

    func encode(to encoder: Encoder) throws {
        try invite.encode(to: encoder)
        var c = encoder.container(keyedBy: WireKey.self)
        try c.encode(qrSVG, forKey: WireKey("qr_svg"))
    }
}

extension HTTPAPI {
    /// Runs `work` on a database worker as the server's own login (for what has no user yet:
    /// redeeming an invite); any failure becomes the JSON error body.
    func runAsServer(_ respond: @escaping Respond, _ work: @escaping @Sendable (Store) throws -> HTTPResponse) {
        let logger = self.logger
        let accepted = workers.submit { session in
            do {
                respond(try work(try session.store()))
            } catch {
                session.dropIfBroken()
                respond(.error(StaffcastError.from(error, logger: logger)))
            }
        }
        if !accepted {
            respond(.error(.unavailable("The server is overloaded right now; nothing was done. Try again in a moment.")))
        }
    }
}
