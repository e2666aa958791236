/// What the outbox delivers (sql/012_reach.sql): a Web Push to one subscription, an email to
/// one person, or a webhook POST.
public enum DeliveryKind: String, Sendable, CaseIterable, Codable {
    case push, email, webhook
}
