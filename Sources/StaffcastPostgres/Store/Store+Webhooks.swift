import Foundation
import StaffcastCore

/// Webhooks of an event (sql/012_reach.sql), as the user under row-level security: only the
/// event's owners create, list and delete them, and the secret is never read back.
extension Store {
    /// A webhook as the API shows it (never its secret).
    public struct Webhook: Sendable, Equatable, Encodable {
        public var id: UUID
        public var eventID: UUID
        public var url: String
        public var events: [String]
        public var createdAt: Date
        enum CodingKeys: String, CodingKey { case id, eventID = "event_id", url, events, createdAt = "created_at" }
        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(Store.id(id), forKey: .id)
            try c.encode(Store.id(eventID), forKey: .eventID)
            try c.encode(url, forKey: .url)
            try c.encode(events, forKey: .events)
            try c.encode(RFC3339.format(createdAt), forKey: .createdAt)
        }
    }

    /// One attempt at one delivery.
    public struct WebhookAttempt: Sendable, Equatable, Encodable {
        public var deliveryID: UUID
        public var type: String
        public var attempt: Int
        public var at: Date
        public var statusCode: Int?
        public var outcome: String
        public var error: String?
        enum CodingKeys: String, CodingKey {
            case deliveryID = "delivery_id", type, attempt, at, statusCode = "status_code", outcome, error
        }
        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(Store.id(deliveryID), forKey: .deliveryID)
            try c.encode(type, forKey: .type)
            try c.encode(attempt, forKey: .attempt)
            try c.encode(RFC3339.format(at), forKey: .at)
            try c.encode(statusCode, forKey: .statusCode)
            try c.encode(outcome, forKey: .outcome)
            try c.encode(error, forKey: .error)
        }
    }

    private static let webhookColumns = "w.id, w.event_id, w.url, w.events::text, \(epochMicros("w.created_at"))"

    private static func webhooks(_ r: PGResult) -> [Webhook] {
        (0..<r.rowCount).compactMap { i in
            guard let id = r.uuid(i, 0), let event = r.uuid(i, 1), let url = r.string(i, 2), let created = r.date(i, 4) else { return nil }
            let events = (r.string(i, 3) ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "{}"))
                .split(separator: ",").map(String.init)
            return Webhook(id: id, eventID: event, url: url, events: events, createdAt: created)
        }
    }

    private func requireOwner(_ summary: EventSummary) throws {
        guard summary.accessLevel == .owner else {
            throw StaffcastError.forbidden("Only owners of the event manage its webhooks.")
        }
    }

    public func createWebhook(as user: UUID, _ request: WebhookRequest) throws -> Webhook {
        try withAccess(user, request.eventID) { tx, summary in
            try requireOwner(summary)
            let r = try tx.query("""
                INSERT INTO webhooks AS w (event_id, url, events, secret, created_by) VALUES ($1, $2, $3::text[], $4, $5)
                RETURNING \(Self.webhookColumns)
                """, [Self.id(request.eventID), request.url, "{" + request.events.joined(separator: ",") + "}", request.secret,
                      Self.id(user)])
            guard let w = Self.webhooks(r).first else { throw PostgresError(.unexpectedResult, "the webhook was not returned") }
            return w
        }
    }

    public func webhooks(as user: UUID, event: UUID) throws -> [Webhook] {
        try withAccess(user, event) { tx, summary in
            try requireOwner(summary)
            return Self.webhooks(try tx.query("SELECT \(Self.webhookColumns) FROM webhooks w WHERE w.event_id = $1 ORDER BY w.created_at, w.id",
                                              [Self.id(event)]))
        }
    }

    public func deleteWebhook(as user: UUID, event: UUID, id: UUID) throws {
        try withAccess(user, event) { tx, summary in
            try requireOwner(summary)
            let r = try tx.query("DELETE FROM webhooks WHERE id = $1 AND event_id = $2 RETURNING id", [Self.id(id), Self.id(event)])
            guard r.rowCount == 1 else { throw StaffcastError.notFound("This event has no webhook \(Self.id(id)).") }
        }
    }

    /// The latest `limit` attempts of a webhook, newest first.
    public func webhookAttempts(as user: UUID, event: UUID, webhook: UUID, limit: Int = 100) throws -> [WebhookAttempt] {
        try withAccess(user, event) { tx, summary in
            try requireOwner(summary)
            guard try tx.query("SELECT 1 FROM webhooks WHERE id = $1 AND event_id = $2", [Self.id(webhook), Self.id(event)]).rowCount == 1 else {
                throw StaffcastError.notFound("This event has no webhook \(Self.id(webhook)).")
            }
            let r = try tx.query("""
                SELECT delivery_id, change_type, attempt, \(Self.epochMicros("at")), status_code, outcome, error
                FROM webhook_attempts WHERE webhook_id = $1 ORDER BY id DESC LIMIT $2
                """, [Self.id(webhook), String(limit)])
            return (0..<r.rowCount).compactMap { i in
                guard let d = r.uuid(i, 0), let at = r.date(i, 3) else { return nil }
                return WebhookAttempt(deliveryID: d, type: r.string(i, 1) ?? "", attempt: r.int(i, 2) ?? 0, at: at,
                                      statusCode: r.int(i, 4), outcome: r.string(i, 5) ?? "", error: r.string(i, 6))
            }
        }
    }
}
