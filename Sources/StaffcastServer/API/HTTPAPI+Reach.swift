import Foundation
import StaffcastCore
import StaffcastPostgres

/// Web Push and webhook routes (docs/protocol.md, "Reaching staff"): the VAPID public key (no
/// auth), a user's own push subscriptions, and an event owner's webhooks with their attempts.
extension HTTPAPI {
    func reach(_ route: HTTPRoute, _ request: HTTPRequest, bearer token: String?, _ respond: @escaping Respond) {
        let head = request.head
        switch route {
        case .pushKey:
            guard let key = pushPublicKey else {
                // Not a failure of the server: this one simply offers no push (no push_vapid_key).
                respond(.error(.notFound("This server does not offer Web Push (no push_vapid_key configured).")))
                return
            }
            respond(.json(200, ["public_key": key]))
        case .addPushSubscription:
            // Who asks comes first: no token is 401 whatever the body.
            guard caller(token, respond) != nil else { return }
            guard let subscription: PushSubscriptionRequest = decoded(respond, try PushSubscriptionRequest.decode(body: request.body)) else { return }
            guard WebPushMessage.isSubscriptionKey(subscription.p256dh) else {
                respond(.error(.invalid("keys.p256dh is not a point on the P-256 curve: no push could be encrypted to it. "
                                        + "Send the browser's PushSubscription unchanged.")))
                return
            }
            let keep = configuration.reach.maxSubscriptionsPerUser
            let add: @Sendable () -> Void = { [self] in
                runAsUser(token, respond) { store, identity in
                    // The subscription belongs to this token: revoking it ends the subscription (sql/019).
                    let registeredBy = token.map(TokenHasher.digest(of:))
                    return .json(201, ["id": try store.addPushSubscription(as: identity.userID, token: registeredBy, subscription,
                                                                          keep: keep).wireText])
                }
            }
            guard !configuration.reach.allowPrivateHosts else { return add() }
            // Not loopback or the private network: one token must not point deliveries inward.
            Self.pushHostCheck.check(URL(string: subscription.endpoint)?.host ?? "") { refusal in
                if let refusal { respond(.error(refusal)) } else { add() }
            }
        case .pushSubscriptions:
            // This sign-in's own: what the staff app asks before it leaves a hidden phone to push.
            let registeredBy = token.map(TokenHasher.digest(of:))
            listAsUser("subscriptions", token, respond) { store, user in
                try store.pushSubscriptions(as: user, token: registeredBy).map { ["id": $0.wireText] }
            }
        case .deletePushSubscription(let id):
            runAsUser(token, respond) { store, identity in
                try store.deletePushSubscription(as: identity.userID, id: id)
                return .json(200, DeletedBody(id: id))
            }
        case .webhooks(let eventID) where head.method == "POST":
            guard caller(token, respond) != nil else { return }
            guard let webhook: WebhookRequest = decoded(respond, try WebhookRequest.decode(eventID: eventID, body: request.body)) else { return }
            runAsUser(token, respond) { store, identity in .json(201, try store.createWebhook(as: identity.userID, webhook)) }
        case .webhooks(let eventID):
            listAsUser("webhooks", token, respond) { try $0.webhooks(as: $1, event: eventID) }
        case .deleteWebhook(let eventID, let webhookID):
            runAsUser(token, respond) { store, identity in
                try store.deleteWebhook(as: identity.userID, event: eventID, id: webhookID)
                return .json(200, DeletedBody(id: webhookID))
            }
        case .webhookDeliveries(let eventID, let webhookID):
            listAsUser("deliveries", token, respond) { try $0.webhookAttempts(as: $1, event: eventID, webhook: webhookID) }
        default:
            respond(.error(.notFound("There is no such route.")))
        }
    }
}

extension HTTPAPI {
    /// Push endpoints' hosts are checked off the service loops and the database workers.
    static let pushHostCheck = PushHostCheck()
}

/// `{"id", "deleted": true}`: the answer to deleting a push subscription or a webhook.
struct DeletedBody: Encodable {
    let id: UUID
    enum CodingKeys: String, CodingKey { case id, deleted }
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id.wireText, forKey: .id)
        try c.encode(true, forKey: .deleted)
    }
}
