import Foundation
import StaffcastClient
import StaffcastCore
import XCTest

/// The base of the terminal state tests: one event, Sam (who watches), Olivia (who sends), a
/// fixed clock, and messages made from a few words.
class WatchStateTestCase: XCTestCase {
    let event = UUID()
    let me = Identity(userID: UUID(), displayName: "Sam")
    let organiser = UUID()
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    /// Sam's state, subscribed to the event with nothing in it.
    func state() -> WatchState {
        var s = WatchState(eventID: event)
        s.connected(me)
        s.subscribed(EventSummary(id: event, name: "Fest", startsAt: nil, accessLevel: .staff), history: [], unreadCount: 0)
        return s
    }

    func message(_ seq: Int64, _ text: String = "hello", priority: Priority = .normal, type: MessageType = .broadcast,
                 sentAt: Date? = nil, expiresAt: Date? = nil, read: Bool = false) -> StaffMessage {
        StaffMessage(id: UUID(), seq: seq, eventID: event, senderID: organiser, senderName: "Olivia", message: text,
                     messageType: type, priority: priority, sentAt: sentAt ?? t0, expiresAt: expiresAt, read: read, readCount: 0)
    }
}
