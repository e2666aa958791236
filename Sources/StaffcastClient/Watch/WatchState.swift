import Foundation
import StaffcastCore

/// Everything `staffcast watch` shows, and how it changes. Pure: inputs are server frames,
/// keys and the clock; outputs are `WatchEffect`s for the driver to carry out. The screen is a
/// function of this state (`WatchRenderer`).
public struct WatchState: Equatable {
    public enum Connection: Equatable {
        case connecting
        case connected
        case reconnecting(at: Date)
        case offline(String)
    }

    public enum Mode: Equatable {
        case messages, notifications, events, help
        /// One message in full (`detailID`), scrolled by `detailScroll` rows.
        case detail
    }

    public struct Banner: Equatable {
        public var message: StaffMessage
        public var shownAt: Date
        /// Urgent banners stay until dismissed; the rest leave after `bannerSeconds`.
        public var sticky: Bool { message.priority == .urgent }
    }

    /// An emergency or urgent message that holds the screen until acknowledged.
    public struct Alarm: Equatable {
        public var messageID: UUID
        /// The escalation round that brought it back (a `reminder`), nil when it arrived live.
        public var round: Int?
    }

    public static let bannerSeconds: TimeInterval = 5
    /// While an alarm holds the screen the bell rings this often.
    public static let bellInterval: TimeInterval = 3
    /// The deliberate key that acknowledges an alarm (Shift+A): not Enter, Space or a key
    /// pressed by habit.
    public static let acknowledgeKey: Character = "A"
    public static let expiryWarning: TimeInterval = 10 * 60

    public var user: Identity?
    public var eventID: UUID
    public var eventName = ""
    public var connection = Connection.connecting
    public var unreadCount = 0
    /// Messages of the event, by seq, unexpired.
    public var messages: [StaffMessage] = []
    public var selected = 0
    public var banners: [Banner] = []
    public var notifications: [StaffNotification] = []
    public var notificationSelected = 0
    public var events: [EventSummary] = []
    public var eventSelected = 0
    public var mode = Mode.messages
    public var status: String?
    /// The language of everything the screen says.
    public var strings = Strings.english
    /// Alarms waiting, in the order they took the screen; the first is shown.
    public var alarms: [Alarm] = []
    public var lastBell: Date?
    /// Rows the alarm's text is scrolled by (a long emergency is read in full before Shift+A).
    public var alarmScroll = 0
    /// The message the detail view shows, and how far it is scrolled.
    public var detailID: UUID?
    public var detailScroll = 0
    /// The terminal's size, as last drawn (the detail view scrolls by pages of it).
    public var screenWidth = 80
    public var screenHeight = 24
    /// Paging back through history: the oldest seq of the unbroken run loaded back from the
    /// newest message (older pages are asked for before it); restored emergencies do not move it.
    public var historyFloor: Int64?
    /// A page of older messages was asked for and has not come yet.
    public var loadingOlder = false
    /// The server said nothing older exists.
    public var olderExhausted = false
    /// Messages `restore` put in the list that no `subscribed` count covered yet: found over
    /// HTTP after the subscribe's snapshot, they still arrive live, and are counted then.
    private var restoredUncounted: Set<UUID> = []
    /// The last `read` reply's `counted_through_seq`: live messages up to it are in
    /// `unreadCount` already (`CountedUnread`). Nil since subscribing.
    private var countedThroughSeq: Int64?

    public init(eventID: UUID) { self.eventID = eventID }

    public var unreadNotifications: Int { notifications.filter { !$0.read }.count }

    /// The alarm holding the screen: the first raised whose message is here, unread and unexpired.
    public var alarm: (message: StaffMessage, round: Int?)? {
        for a in alarms {
            if let m = messages.first(where: { $0.id == a.messageID }), !m.read { return (m, a.round) }
        }
        return nil
    }

    /// Emergency and urgent messages of this event still to acknowledge (not read), oldest first.
    public var toAcknowledge: [StaffMessage] {
        messages.filter { $0.mustBeAcknowledged && !$0.read && $0.senderID != user?.userID }
    }

    private mutating func raise(_ message: StaffMessage, round: Int?) {
        guard message.mustBeAcknowledged, !message.read, message.senderID != user?.userID else { return }
        if let i = alarms.firstIndex(where: { $0.messageID == message.id }) {
            if round != nil { alarms[i].round = round }
        } else {
            alarms.append(Alarm(messageID: message.id, round: round))
        }
    }

    // MARK: inputs

    public mutating func connected(_ user: Identity) {
        self.user = user
        connection = .connected
        status = nil
    }

    public mutating func disconnected(retryAt: Date) { connection = .reconnecting(at: retryAt) }

    public mutating func offline(_ reason: String) { connection = .offline(reason) }

    /// The reply to subscribe: history replaces nothing already shown, it adds what is new.
    public mutating func subscribed(_ event: EventSummary, history: [StaffMessage], unreadCount: Int) {
        if !event.name.isEmpty { eventName = event.name }
        merge(history)
        lowerFloor(history)
        restoredUncounted.subtract(history.map(\.id)) // counted in `unreadCount` below
        // Unread emergencies from before (sent while away) take the screen too.
        for m in history where m.eventID == eventID { raise(m, round: nil) }
        self.unreadCount = unreadCount
        countedThroughSeq = nil
        connection = .connected
    }

    /// Older messages (a `history` reply: context after a restart, or a page asked for by
    /// scrolling back): into the list, no banner. Unread emergencies among them take the
    /// screen: they were never acknowledged. `more: false`: nothing older exists.
    public mutating func history(_ messages: [StaffMessage], eventID: UUID, more: Bool = true) {
        guard eventID == self.eventID else { return }
        merge(messages)
        lowerFloor(messages)
        loadingOlder = false
        if !more { olderExhausted = true }
        for m in messages.sorted(by: { $0.seq < $1.seq }) { raise(m, round: nil) }
    }

    /// Unacknowledged emergency and urgent messages found at start (however old): into the
    /// list, and onto the screen until acknowledged. They leave the paging floor alone.
    public mutating func restore(_ found: [StaffMessage]) {
        let pending = found.filter { $0.eventID == eventID && $0.mustBeAcknowledged && !$0.read && $0.senderID != user?.userID }
        for m in pending where !messages.contains(where: { $0.id == m.id }) { restoredUncounted.insert(m.id) }
        merge(pending)
        for m in pending.sorted(by: { $0.seq < $1.seq }) { raise(m, round: nil) }
    }

    /// The reply to `mark_all_read`: every message up to `throughSeq` that is not an
    /// emergency or urgent one (those wait for Shift+A) is read now.
    public mutating func readAll(eventID: UUID, throughSeq: Int64, marked: Int, unreadCount: Int, countedThroughSeq: Int64? = nil,
                                 now: Date = Date()) {
        guard eventID == self.eventID else { return }
        for i in messages.indices where messages[i].seq <= throughSeq && !messages[i].read && !messages[i].mustBeAcknowledged
            && messages[i].senderID != user?.userID {
            messages[i].read = true
            messages[i].readCount += 1
        }
        counted(unreadCount, through: countedThroughSeq, now: now)
        status = strings.text(.markedAll, marked)
    }

    private mutating func lowerFloor(_ page: [StaffMessage]) {
        guard let low = page.map(\.seq).min() else { return }
        historyFloor = min(historyFloor ?? low, low)
    }

    /// A live message: into the list, a banner on top; returns effects (the bell).
    public mutating func live(_ message: StaffMessage, now: Date) -> [WatchEffect] {
        guard message.eventID == eventID else { return [] }
        if messages.contains(where: { $0.id == message.id }) {
            // Already on screen through `restore` (its alarm is up): counted once, now.
            if restoredUncounted.remove(message.id) != nil, message.senderID != user?.userID, !message.read { unreadCount += 1 }
            return []
        }
        merge([message])
        if message.senderID != user?.userID, CountedUnread.liveIsUncounted(seq: message.seq, countedThroughSeq: countedThroughSeq) {
            unreadCount += 1
        }
        banners.append(Banner(message: message, shownAt: now))
        raise(message, round: nil)
        let ring = message.priority == .urgent || message.messageType == .emergency
        if ring { lastBell = now }
        return ring ? [.bell] : []
    }

    /// A `reminder`: a message not read yet comes back and takes the screen again, ringing.
    public mutating func reminder(_ message: StaffMessage, round: Int, now: Date) -> [WatchEffect] {
        guard message.eventID == eventID else { return [] }
        if let known = messages.first(where: { $0.id == message.id }), known.read { return [] }
        merge([message])
        if let i = alarms.firstIndex(where: { $0.messageID == message.id }) {
            alarms[i].round = round
        } else if message.senderID != user?.userID {
            // Any reminded message takes the screen (an organiser escalated it: it must be read).
            alarms.append(Alarm(messageID: message.id, round: round))
        }
        lastBell = now
        return [.bell]
    }

    /// While an alarm holds the screen: the bell again every `bellInterval`.
    public mutating func ring(now: Date) -> [WatchEffect] {
        guard alarm != nil else { return [] }
        if let last = lastBell, now.timeIntervalSince(last) < Self.bellInterval { return [] }
        lastBell = now
        return [.bell]
    }

    /// The reply to `mark_read`. `countedThroughSeq`: see `CountedUnread`.
    public mutating func read(messageID: UUID, eventID: UUID, unreadCount: Int, countedThroughSeq: Int64? = nil, now: Date = Date()) {
        guard eventID == self.eventID else { return }
        if let i = messages.firstIndex(where: { $0.id == messageID }), !messages[i].read {
            messages[i].read = true
            messages[i].readCount += 1
        }
        alarms.removeAll { $0.messageID == messageID }
        counted(unreadCount, through: countedThroughSeq, now: now)
    }

    /// `marked_read`: this person read these messages, here or on another device. Each is read
    /// now and its alarm stops; the count drops by the ones it held as unread (a read asked for
    /// here is settled again by its own reply, which carries the server's count).
    public mutating func markedRead(eventID: UUID, messageIDs: [UUID], now: Date = Date()) {
        guard eventID == self.eventID else { return }
        for id in messageIDs {
            alarms.removeAll { $0.messageID == id }
            guard let i = messages.firstIndex(where: { $0.id == id }), !messages[i].read else { continue }
            messages[i].read = true
            messages[i].readCount += 1
            let counted = restoredUncounted.remove(id) == nil
            if counted, messages[i].senderID != user?.userID, !messages[i].isExpired(at: now) {
                unreadCount = max(0, unreadCount - 1)
            }
        }
    }

    /// A reply's count, with the unread messages held that its snapshot could not see.
    private mutating func counted(_ reply: Int, through: Int64?, now: Date) {
        unreadCount = CountedUnread.count(reply: reply, countedThroughSeq: through, held: messages, user: user?.userID, now: now)
        countedThroughSeq = through
    }

    /// A message was corrected: its line and any banner of it show the new text (this
    /// user's read state stays as it is).
    public mutating func updated(_ m: StaffMessage) {
        guard m.eventID == eventID else { return }
        if let i = messages.firstIndex(where: { $0.id == m.id }) {
            messages[i].message = m.message
            messages[i].editedAt = m.editedAt
        }
        for i in banners.indices where banners[i].message.id == m.id {
            banners[i].message.message = m.message
            banners[i].message.editedAt = m.editedAt
        }
    }

    /// A message was retracted: it leaves the list, its banner and the unread count.
    public mutating func retracted(messageID: UUID, eventID: UUID) {
        guard eventID == self.eventID else { return }
        banners.removeAll { $0.message.id == messageID }
        guard let i = messages.firstIndex(where: { $0.id == messageID }) else { return }
        let gone = messages.remove(at: i)
        if !gone.read && gone.senderID != user?.userID { unreadCount = max(0, unreadCount - 1) }
        selected = min(selected, max(0, messages.count - 1))
    }

    public mutating func notification(_ n: StaffNotification) {
        if let i = notifications.firstIndex(where: { $0.id == n.id }) { notifications[i] = n } else { notifications.insert(n, at: 0) }
    }

    public mutating func notificationRead(_ id: UUID) {
        if let i = notifications.firstIndex(where: { $0.id == id }) {
            notifications[i].read = true
            notifications[i].readAt = notifications[i].readAt ?? Date()
        }
    }

    public mutating func accessRevoked(_ eventID: UUID) {
        guard eventID == self.eventID else { return }
        connection = .offline(strings[.accessEnded])
    }

    /// Time passes: banners time out, expired messages leave.
    public mutating func tick(now: Date) {
        banners.removeAll { !$0.sticky && now.timeIntervalSince($0.shownAt) >= Self.bannerSeconds }
        banners.removeAll { $0.message.isExpired(at: now) }
        let before = messages.count
        messages.removeAll { $0.isExpired(at: now) }
        if messages.count != before { selected = min(selected, max(0, messages.count - 1)) }
    }

    /// Switches to another event: the list starts over.
    public mutating func switched(to event: EventSummary) {
        eventID = event.id
        eventName = event.name
        messages = []
        banners = []
        alarms = []
        selected = 0
        unreadCount = 0
        countedThroughSeq = nil
        mode = .messages
        detailID = nil
        historyFloor = nil
        loadingOlder = false
        olderExhausted = false
    }

    /// Our reply was stored (`replied`): said in the footer.
    /// The 0-based option key `c` (1 to 6) chooses in `m`'s poll; nil when it is no option of it.
    public static func pollOption(_ c: Character, of m: StaffMessage) -> Int? {
        guard let poll = m.poll, let n = c.wholeNumberValue, (1...poll.options.count).contains(n) else { return nil }
        return n - 1
    }

    /// Our answer to a poll (chosen here, or confirmed by `answered`): shown on the message,
    /// which answering also marks read.
    public mutating func answered(messageID: UUID, option: Int) {
        guard let i = messages.firstIndex(where: { $0.id == messageID }) else { return }
        if !messages[i].read && messages[i].senderID != user?.userID { unreadCount = max(0, unreadCount - 1) }
        messages[i].answer = option
        messages[i].read = true
    }

    public mutating func replied(_ r: Reply) {
        let about = messages.first { $0.id == r.messageID }?.message ?? ""
        status = strings.text(.replied, ["status": strings.describe(r), "message": about])
    }

    /// Someone's reply, live (admins and owners get these): said in the footer.
    public mutating func replyArrived(_ r: Reply) {
        guard r.eventID == eventID else { return }
        let about = messages.first { $0.id == r.messageID }.map { " (\($0.message))" } ?? ""
        status = " \(r.displayName): \(strings.describe(r))\(about)"
    }

    /// The message on list row `row` (newest first).
    public func message(atRow row: Int) -> StaffMessage? {
        let i = messages.count - 1 - row
        return messages.indices.contains(i) ? messages[i] : nil
    }

    private mutating func merge(_ incoming: [StaffMessage]) {
        var byID = Dictionary(messages.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        for m in incoming where m.eventID == eventID { byID[m.id] = m }
        messages = byID.values.sorted { $0.seq < $1.seq }
    }
}

/// What the state asks its driver to do.
public enum WatchEffect: Equatable {
    case markRead(UUID)
    /// One `mark_all_read` for the event, up to the newest seq shown.
    case markAllRead(eventID: UUID, throughSeq: Int64)
    /// Ask for the page of history before this seq (`history` with `before_seq`).
    case loadOlder(eventID: UUID, beforeSeq: Int64)
    case markNotificationRead(UUID)
    case listEvents
    case switchEvent(EventSummary)
    /// Answer a message with a status (op `reply`).
    case reply(UUID, Reply.Status)
    /// Answer a poll with a 0-based option (op `answer`).
    case answer(UUID, Int)
    case bell
    case quit
}
