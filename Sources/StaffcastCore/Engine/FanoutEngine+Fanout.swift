import Foundation

/// Committed batches in: token and access changes applied, frames queued on every subscriber,
/// and the audiences of receipts and reminders. Same thread rules as `FanoutEngine`.
extension FanoutEngine {
    // MARK: fan-out

    /// Applies what was committed: token and access changes first, then messages (each frame
    /// queued, unchanged, on every subscriber), then notifications.
    public func committed(_ batch: CommittedBatch<Frame>, now: Double, wall: Date) -> [EngineAction] {
        var actions: [EngineAction] = []
        fannedOut.removeAll(keepingCapacity: true)
        if !batch.revokedTokens.isEmpty || !batch.expiredTokens.isEmpty {
            for connection in connections.values where connection.isOpen {
                guard let token = connection.token else { continue }
                let reason: String
                if batch.revokedTokens.contains(token) { reason = "token revoked" }
                else if batch.expiredTokens.contains(token) { reason = "token expired" }
                else { continue }
                stats.tokenRevocationsClosed += 1
                actions.append(.notice(.tokenRevoked(connection: connection.id)))
                close(connection, 4401, reason, afterFlush: false, now: now, into: &actions)
            }
        }
        for change in batch.access {
            recentAccess[AccessKey(event: change.eventID, user: change.userID)] = (change.seq, change.level, now)
            if let level = change.level {
                // A changed level: receipts follow it (an admin made staff stops getting them).
                for id in hub.connections(ofUser: change.userID) where connections[id]?.levels[change.eventID] != nil {
                    connections[id]?.levels[change.eventID] = level
                }
            }
            guard let frame = change.revokedFrame else { continue }
            for id in hub.revoke(user: change.userID, from: change.eventID) {
                guard let connection = connections[id] else { continue }
                connection.levels[change.eventID] = nil
                actions.append(.notice(.accessRevoked(connection: id, event: change.eventID)))
                enqueue(connection, frame, now: now, into: &actions)
            }
        }
        for message in batch.messages {
            let recipients = hub.publish(seq: message.seq, eventID: message.eventID, expiresAt: message.expiresAt, frame: message.frame,
                                         audience: message.audience)
            for id in recipients {
                if let connection = connections[id] { enqueue(connection, message.frame, now: now, into: &actions) }
            }
            stats.messagesFannedOut += 1
            fannedOut.append(FanOut(seq: message.seq, eventID: message.eventID, recipients: recipients.count))
        }
        // Edits and retracts (to every subscriber of the event, like the message itself) and
        // replies (to the subscribers among the event's admins and owners).
        for change in batch.eventFrames {
            if let seq = change.changeSeq {
                hub.recordChange(seq: seq, eventID: change.eventID, frame: change.frame, audience: change.audience)
            }
            for id in hub.subscribers(of: change.eventID, forChange: change.changeSeq) {
                guard let connection = connections[id], change.reaches(connection.identity.userID) else { continue }
                enqueue(connection, change.frame, now: now, into: &actions)
            }
        }
        for notification in batch.notifications {
            for id in hub.connections(ofUser: notification.userID) {
                if let connection = connections[id] { enqueue(connection, notification.frame, now: now, into: &actions) }
            }
        }
        // One look at an event's subscribers per batch, not per receipt: a read storm brings
        // thousands of receipts of one event in a batch, and scanning 10,000 subscribers for each
        // was quadratic (about 18 s of a loop's CPU for 10,000 marks). Access changes of the
        // batch were applied above, so the audience cannot change within it.
        var receiptAudiences: [UUID: [Int]] = [:]
        for receipt in batch.receipts {
            let audience: [Int]
            if let known = receiptAudiences[receipt.eventID] {
                audience = known
            } else {
                audience = receiptAudience(of: receipt.eventID)
                receiptAudiences[receipt.eventID] = audience
            }
            for id in audience {
                if let connection = connections[id] { enqueue(connection, receipt.frame, now: now, into: &actions) }
            }
        }
        for reminder in batch.reminders {
            for id in reminderAudience(users: reminder.users, event: reminder.eventID) {
                if let connection = connections[id] { enqueue(connection, reminder.frame, now: now, into: &actions) }
            }
        }
        for read in batch.markedRead {
            for id in reminderAudience(users: [read.userID], event: read.eventID) {
                if let connection = connections[id] { enqueue(connection, read.frame, now: now, into: &actions) }
            }
        }
        return actions
    }

    /// Who gets a `receipt` of an event: connections subscribed to it whose user is an admin
    /// or owner of it (as of the last access change applied). Staff never do.
    public func receiptAudience(of event: UUID) -> [Int] {
        hub.subscribers(of: event).filter { connections[$0]?.levels[event]?.maySeeReceipts == true }.sorted()
    }

    /// Who gets a `reminder`: the connections of the named non-readers that are subscribed to
    /// the message's event (so only people who still have access, on a screen for that event).
    public func reminderAudience(users: [UUID], event: UUID) -> [Int] {
        users.flatMap { user in hub.connections(ofUser: user).filter { hub.isSubscribed($0, to: event) } }.sorted()
    }
}
