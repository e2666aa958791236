import Foundation
import StaffcastCore
import StaffcastPostgres

/// Group commit of poll answers (`answer` op and `POST /v1/messages/{id}/answers`), the same
/// way as reads (`ReadBatcher`): when ten thousand staff answer "Are you safe?" at once, the
/// answers that arrive together are one transaction (`Store.answerBatch`). Each keeps its own
/// outcome (the message's event); a failed batch fails every answer.
typealias AnswerBatcher = RequestBatcher<Store.PendingAnswer, UUID>

/// Group commit of notifications (`POST /v1/users/{id}/notifications`): those that arrive
/// together are committed together (`Store.createNotificationBatch`), one transaction and one
/// round trip, each still inserted as its own sender under row-level security. One the sender
/// may not send is answered with its own precise error (`Store.createNotification`, alone) and
/// stores nothing.
typealias NotificationBatcher = RequestBatcher<Store.PendingNotification, StaffNotification>

extension RequestBatcher.Kind where Request == Store.PendingAnswer, Value == UUID {
    static var answers: Self {
        Self(name: "answer", maxBatch: 2_000,
             unavailable: "The server is overloaded right now; your answer was not stored. Try again in a moment.",
             together: { store, answers in try store.answerBatch(answers).map { $0 } })
    }
}

extension RequestBatcher.Kind where Request == Store.PendingNotification, Value == StaffNotification {
    static var notifications: Self {
        Self(name: "notification", maxBatch: 256,
             unavailable: "The server is overloaded right now; nothing was stored. Try again in a moment.",
             together: { store, pending in try store.createNotificationBatch(pending).map { $0.map { .success($0) } } },
             alone: { store, one in try store.createNotification(as: one.sender, one.request) })
    }
}

extension AnswerBatcher {
    func submit(user: UUID, message: UUID, option: Int, done: @escaping Item.Completion) -> Bool {
        submit(Store.PendingAnswer(user: user, message: message, option: option), done: done)
    }
}
