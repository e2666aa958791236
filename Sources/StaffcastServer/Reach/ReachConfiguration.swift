import Foundation
import StaffcastCore

/// How staffcast reaches staff who are not connected (docs/operations.md, "Push, email and
/// webhooks"): Web Push, email, and the outbox that delivers them and webhooks.
public struct ReachConfiguration: Sendable, Equatable {
    /// PEM P-256 private key for VAPID (`push_vapid_key`); made on first start when the file is
    /// absent. Nil: Web Push is off (`GET /v1/push/key` answers 404).
    public var pushVapidKey: String?
    /// The VAPID `sub` (`push_contact`): a mailto: or https: URL where push services reach you.
    public var pushContact = ConfigKey.pushContact.defaultText
    /// Push subscriptions one user may have (`push_max_subscriptions_per_user`, default 10): a
    /// new one past it replaces their oldest (a reinstalled phone keeps working).
    public var maxSubscriptionsPerUser = ConfigKey.pushMaxSubscriptionsPerUser.defaultInteger
    /// Accept push endpoints on IP literals, localhost and private networks
    /// (`push_allow_private_hosts`, default false: refused with 400, `DeliveryHostRule`).
    public var allowPrivateHosts = ConfigKey.pushAllowPrivateHosts.defaultFlag
    /// `smtp://[user:password@]host:port` (`smtp_url`; STARTTLS when the server offers it,
    /// `smtps://` for TLS from the start). Nil: no email.
    public var smtpURL: String?
    /// The From address of those emails (`email_from`).
    public var emailFrom: String?
    /// Seconds after an urgent or emergency message is sent that someone who has not read it
    /// gets it by email (`email_after_seconds`, default 60).
    public var emailAfterSeconds = ConfigKey.emailAfterSeconds.defaultInteger
    /// The URL people open the app at, for the link in emails (`public_url`; default from the
    /// listen address). The app is `public_url` + `/app`.
    public var publicURL: String?
    /// A PEM CA bundle to trust for push services, webhooks and SMTP besides the system's
    /// (`delivery_ca_file`; a private CA, or tests).
    public var caFile: String?
    /// Deliveries in flight at once to one host (`delivery_concurrency_per_host`, default 16):
    /// all of one browser's pushes go to its vendor's one push service.
    public var concurrencyPerHost = ConfigKey.deliveryConcurrencyPerHost.defaultInteger
    /// Pushes in flight at once for one person: endpoints one staff token registered that never
    /// answer hold at most this many delivery threads (each up to `attemptTimeout`).
    public var concurrencyPerPerson = 4
    /// Threads that do the HTTP and SMTP I/O (`delivery_threads`, default 32; they mostly wait).
    public var threads = ConfigKey.deliveryThreads.defaultInteger
    /// Seconds one HTTP or SMTP attempt may take before it counts as a timeout.
    public var attemptTimeout = 20.0

    public init() {}

    /// Email is on when both the server and the From address are set.
    public var emailEnabled: Bool { smtpURL != nil && emailFrom != nil }

    /// `smtp_url` with any password hidden, for logs (the mask is `SecretMask`'s, as in `config show`).
    public static func redacted(_ url: String) -> String {
        SecretMask.hidingPassword(in: url)
    }
}
