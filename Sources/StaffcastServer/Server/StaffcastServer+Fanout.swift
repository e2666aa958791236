import Foundation
import StaffcastCore
import StaffcastPostgres

/// Live delivery of what any server committed, as read by the change listener.
extension StaffcastServer {
    /// On the listener thread: encode each live frame once, then hand the batch to the
    /// service thread. Access changes are applied before messages of the same batch, so a
    /// revoked user never gets a message committed after the revoke.
    func deliver(_ batch: ChangeBatch) {
        let access = batch.access.map { change in
            (change, change.level == nil ? OutFrame(ServerFrame.accessRevoked(eventID: change.eventID).encoded()) : nil)
        }
        let now = Date()
        for m in batch.messages { metrics.listenerLag.recordSeconds(max(0, now.timeIntervalSince(m.sentAt))) }
        metrics.listenerBatches.increment()
        let messages = batch.messages.map { ($0, OutFrame(ServerFrame.message($0).encoded())) }
        let notifications = batch.notifications.map { ($0, OutFrame(ServerFrame.notification($0).encoded())) }
        let box = FanoutBatch(access: access, messages: messages, notifications: notifications)
        // Back-pressure: when the service thread is far behind, the listener waits rather than
        // piling batches up in memory (the change log, not the inbox, is the truth).
        while inboxDepth > Self.maxInboxDepth && state == .running { usleep(1_000) }
        post { [self] in apply(box) }
    }

    /// How far behind the service thread may be before the listener waits.
    static let maxInboxDepth = 1_024

    private func apply(_ batch: FanoutBatch) {
        let now = Date()
        for (change, revokedFrame) in batch.access {
            let key = AccessKey(event: change.eventID, user: change.userID)
            recentAccess[key] = (change.seq, change.level, now)
            if let revokedFrame {
                for id in hub.revoke(user: change.userID, from: change.eventID) {
                    enqueue(to: id, revokedFrame)
                    logger.info("subscription ended: access revoked", metadata: ["conn": "\(id)", "event": "\(change.eventID)"])
                }
            }
        }
        if recentAccess.count > 10_000 {
            recentAccess = recentAccess.filter { now.timeIntervalSince($0.value.at) < 300 }
        }
        for (message, frame) in batch.messages {
            let recipients = hub.publish(seq: message.seq, eventID: message.eventID, expiresAt: message.expiresAt, frame: frame)
            for id in recipients { enqueue(to: id, frame) }
            stats.messagesFannedOut += 1
            metrics.fanoutLatency.recordSeconds(max(0, now.timeIntervalSince(message.sentAt)))
            logger.info("message fanned out", metadata: ["message": "\(message.id)", "event": "\(message.eventID)",
                                                         "recipients": "\(recipients.count)"])
        }
        for (notification, frame) in batch.notifications {
            for id in hub.connections(ofUser: notification.userID) { enqueue(to: id, frame) }
        }
    }
}

/// One listener batch with its frames already encoded. Frames are immutable once made.
struct FanoutBatch: @unchecked Sendable {
    var access: [(AccessChange, OutFrame?)]
    var messages: [(StaffMessage, OutFrame)]
    var notifications: [(StaffNotification, OutFrame)]
}
