import Foundation
import StaffcastClient
import StaffcastCore

/// `staffcast watch` on a terminal: the subscriber session feeds `WatchState`, keys change it,
/// and the screen is redrawn from it (`WatchRenderer`) whenever it or the clock moves.
struct ScreenWatcher {
    let session: SubscriberSession
    let api: APIClient
    let color: Bool
    var strings = Strings.english

    func run() throws {
        var state = WatchState(eventID: session.eventID)
        state.strings = strings
        if let data = try? api.call("GET", "/v1/me/notifications"),
           let list = try? JSONDecoder().decode(NotificationList.self, from: data) {
            state.notifications = list.notifications
        }
        let screen = CursesScreen(color: color)
        defer { screen.close() }
        var quit = false
        var subscribedOnce = false
        var fatal: CommandFailure?
        var lastDraw = Date.distantPast
        var lastState = state
        var restored = false

        /// Unacknowledged emergency and urgent messages of the event, however old (the
        /// subscribe brings only what is new since last time): they take the screen again.
        /// Once per run, after a subscribe succeeded; retried on the next one if it failed.
        func restoreAlarms() {
            guard !restored else { return }
            var found: [StaffMessage] = []
            for filter in [["type": "emergency"], ["priority": "urgent"]] {
                guard let page = try? api.searchMessages(event: state.eventID, query: filter.merging(["limit": String(Limits.maxHistoryLimit)]) { $1 })
                else { return }
                found += page.messages
            }
            restored = true
            state.restore(found)
        }

        func redraw(force: Bool = false) {
            let now = Date()
            state.tick(now: now)
            // An alarm holding the screen rings again every few seconds until acknowledged.
            for effect in state.ring(now: now) where effect == .bell { screen.bell() }
            guard force || state != lastState || now.timeIntervalSince(lastDraw) >= 1 else { return }
            let (w, h) = screen.size
            state.screenWidth = w
            state.screenHeight = h
            screen.draw(WatchRenderer.render(state, now: now, width: w, height: h))
            lastDraw = now
            lastState = state
        }

        func perform(_ effects: [WatchEffect]) {
            for effect in effects {
                switch effect {
                case .markRead(let id): session.enqueue(.markRead(messageID: id))
                case .markAllRead(let event, let through):
                    session.enqueue(.markAllRead(eventID: event, throughSeq: through))
                case .loadOlder(let event, let before):
                    session.enqueue(.history(eventID: event, beforeSeq: before, limit: Limits.maxHistoryLimit))
                case .markNotificationRead(let id):
                    session.enqueue(.markNotificationRead(notificationID: id))
                case .listEvents: session.enqueue(.listEvents)
                case .switchEvent(let event):
                    state.switched(to: event)
                    session.switchEvent(to: event.id)
                    restored = false
                case .reply(let id, let status):
                    // A status key never needs a text (only `custom` does).
                    if let reply = try? ReplyRequest(messageID: id, status: status.rawValue, text: nil) { session.enqueue(.reply(reply)) }
                case .answer(let id, let option):
                    session.enqueue(.answer(messageID: id, option: option))
                case .bell: screen.bell()
                case .quit: quit = true
                }
            }
        }

        redraw(force: true)
        session.run(tickInterval: 0.1, shouldStop: { quit || StopFlag.shared.isSet }, tick: {
            while let key = screen.key() {
                if key == .resize { redraw(force: true); continue }
                perform(state.key(key))
            }
            redraw()
        }) { update in
            let now = Date()
            switch update {
            case .connecting:
                if case .reconnecting = state.connection {} else if state.user == nil { state.connection = .connecting }
            case .connected(let user):
                state.connected(user)
            case .subscribed(let event, let history, let fresh, let unread):
                // After a reconnect, what was missed meanwhile gets banners like live messages.
                if subscribedOnce { for m in fresh { perform(state.live(m, now: now)) } }
                subscribedOnce = true
                state.subscribed(event, history: history, unreadCount: unread)
                restoreAlarms()
            case .message(let m):
                perform(state.live(m, now: now))
            case .frame(let frame):
                switch frame {
                case .read(_, let id, let event, let unread, let counted):
                    state.read(messageID: id, eventID: event, unreadCount: unread, countedThroughSeq: counted, now: now)
                case .readAll(_, let event, let through, let marked, let unread, let counted):
                    state.readAll(eventID: event, throughSeq: through, marked: marked, unreadCount: unread, countedThroughSeq: counted, now: now)
                case .markedRead(let event, let ids): state.markedRead(eventID: event, messageIDs: ids, now: now)
                case .notification(let n): state.notification(n); screen.bell()
                case .notificationRead(_, let id): state.notificationRead(id)
                case .events(_, let events): state.events = events
                case .history(_, let event, let messages, let more): state.history(messages, eventID: event, more: more)
                case .accessRevoked(let event): state.accessRevoked(event)
                case .messageUpdated(_, let m): state.updated(m)
                case .replied(_, let r): state.replied(r)
                case .reply(let r): state.replyArrived(r)
                case .answered(_, let id, let option): state.answered(messageID: id, option: option)
                case .messageRetracted(_, let id, let event): state.retracted(messageID: id, eventID: event)
                case .reminder(let m, let round): perform(state.reminder(m, round: round, now: now))
                case .error(_, let e):
                    state.status = " \(e.message)"
                    state.loadingOlder = false // a refused page is asked for again on the next move
                default: break
                }
            case .disconnected(_, let retryIn):
                state.disconnected(retryAt: now.addingTimeInterval(retryIn))
            case .fatal(let reason, let notAllowed):
                fatal = CommandFailure(reason, status: notAllowed ? .notAllowed : .failed)
                quit = true
            }
            redraw()
        }
        screen.close()
        if let fatal { throw fatal }
    }
}
