import Foundation
import StaffcastCore

extension StaffcastServer {
    /// Loads (or makes) the VAPID key; throws with a sentence for a person when the key file
    /// is unusable. Called before the port opens.
    func loadVAPIDKey() throws -> VAPIDKey? {
        guard let path = configuration.reach.pushVapidKey else { return nil }
        do {
            return try VAPIDKey.loadOrCreate(path: path, contact: configuration.reach.pushContact)
        } catch {
            throw ServerError.push("\(error)")
        }
    }

    /// Starts the outbox's runner and delivery threads (once the port is known, for the app's link).
    func startOutbox(vapid: VAPIDKey?) {
        let reach = configuration.reach
        let deliverer = Deliverer(configuration: reach, vapid: vapid, appURL: appURL,
                                  tokenEnded: { [gatekeeper] in gatekeeper.hasEnded($0) })
        // The leases name this process, not only the node: a server restarted under the same
        // node_id (a fixed name, a container's PID 1) must not renew, or record into, the
        // leases of the process that died (a review: its rows would never be delivered).
        let leaseOwner = configuration.nodeID + "#" + String(UUID().uuidString.prefix(8)).lowercased()
        setOutbox(OutboxRunner(workers: workers, configuration: reach, deliverer: deliverer, node: leaseOwner,
                               logger: logger, metrics: metrics))
        if reach.smtpURL != nil && reach.emailFrom == nil {
            logger.warning("smtp_url is set but email_from is not: no email will be sent")
        }
    }

    /// The staff app's address for links in emails: `public_url` + `/app`, else this server's
    /// listen address.
    var appURL: String {
        if let base = configuration.reach.publicURL {
            return (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/app"
        }
        let host = configuration.host == "0.0.0.0" ? ProcessInfo.processInfo.hostName : configuration.host
        return "\(configuration.tlsEnabled ? "https" : "http")://\(host):\(configuration.port == 0 ? port : configuration.port)/app"
    }
}
