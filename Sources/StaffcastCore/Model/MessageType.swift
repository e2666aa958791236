/// What kind of staff message this is; shown to staff in words (BROADCAST, ALERT, EMERGENCY).
public enum MessageType: String, Sendable, CaseIterable, Codable {
    case broadcast, alert, emergency
}
