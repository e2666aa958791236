import Foundation

// The JSON shapes of Message and Notification (docs/protocol.md). Kept next to the models'
// field lists so that a new field is added in one place.

extension StaffMessage: Codable {
    enum CodingKeys: String, CodingKey {
        case id, seq, message, priority, read
        case eventID = "event_id", senderID = "sender_id", senderName = "sender_name"
        case messageType = "message_type", sentAt = "sent_at", expiresAt = "expires_at"
        case readCount = "read_count", escalateAfterMinutes = "escalate_after_minutes", editedAt = "edited_at", teams, poll, answer
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(UUID.self, forKey: .id)
        seq = try c.decode(Int64.self, forKey: .seq)
        eventID = try c.decode(UUID.self, forKey: .eventID)
        senderID = try c.decode(UUID.self, forKey: .senderID)
        senderName = try c.decode(String.self, forKey: .senderName)
        message = try c.decode(String.self, forKey: .message)
        messageType = try c.decode(MessageType.self, forKey: .messageType)
        priority = try c.decode(Priority.self, forKey: .priority)
        sentAt = try c.decodeRFC3339(forKey: .sentAt)
        expiresAt = try c.decodeRFC3339IfPresent(forKey: .expiresAt)
        read = try c.decode(Bool.self, forKey: .read)
        readCount = try c.decode(Int.self, forKey: .readCount)
        escalateAfterMinutes = try c.decodeIfPresent(Int.self, forKey: .escalateAfterMinutes)
        editedAt = try c.decodeRFC3339IfPresent(forKey: .editedAt)
        teams = try c.decodeIfPresent([String].self, forKey: .teams) ?? []
        poll = try c.decodeIfPresent(Poll.self, forKey: .poll)
        answer = try c.decodeIfPresent(Int.self, forKey: .answer)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id.uuidString.lowercased(), forKey: .id)
        try c.encode(seq, forKey: .seq)
        try c.encode(eventID.uuidString.lowercased(), forKey: .eventID)
        try c.encode(senderID.uuidString.lowercased(), forKey: .senderID)
        try c.encode(senderName, forKey: .senderName)
        try c.encode(message, forKey: .message)
        try c.encode(messageType, forKey: .messageType)
        try c.encode(priority, forKey: .priority)
        try c.encode(RFC3339.format(sentAt), forKey: .sentAt)
        try c.encode(expiresAt.map(RFC3339.format), forKey: .expiresAt) // null, not absent
        try c.encode(read, forKey: .read)
        try c.encode(readCount, forKey: .readCount)
        try c.encode(escalateAfterMinutes, forKey: .escalateAfterMinutes) // null, not absent
        try c.encode(editedAt.map(RFC3339.format), forKey: .editedAt) // null, not absent
        try c.encode(teams, forKey: .teams)
        try c.encode(poll, forKey: .poll) // null, not absent
        try c.encode(answer, forKey: .answer)
    }
}

extension StaffNotification: Codable {
    enum CodingKeys: String, CodingKey {
        case id, type, title, message, data, read
        case userID = "user_id", readAt = "read_at", createdAt = "created_at"
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(UUID.self, forKey: .id)
        userID = try c.decode(UUID.self, forKey: .userID)
        type = try c.decode(String.self, forKey: .type)
        title = try c.decode(String.self, forKey: .title)
        message = try c.decode(String.self, forKey: .message)
        data = try c.decodeIfPresent(JSONValue.self, forKey: .data).flatMap { $0 == .null ? nil : $0 }
        read = try c.decode(Bool.self, forKey: .read)
        readAt = try c.decodeRFC3339IfPresent(forKey: .readAt)
        createdAt = try c.decodeRFC3339(forKey: .createdAt)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id.uuidString.lowercased(), forKey: .id)
        try c.encode(userID.uuidString.lowercased(), forKey: .userID)
        try c.encode(type, forKey: .type)
        try c.encode(title, forKey: .title)
        try c.encode(message, forKey: .message)
        try c.encode(data ?? .null, forKey: .data)
        try c.encode(read, forKey: .read)
        try c.encode(readAt.map(RFC3339.format), forKey: .readAt)
        try c.encode(RFC3339.format(createdAt), forKey: .createdAt)
    }
}

extension KeyedDecodingContainer {
    func decodeRFC3339(forKey key: Key) throws -> Date {
        let text = try decode(String.self, forKey: key)
        guard let date = RFC3339.parse(text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "not RFC 3339: \(text)")
        }
        return date
    }

    func decodeRFC3339IfPresent(forKey key: Key) throws -> Date? {
        guard let text = try decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let date = RFC3339.parse(text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "not RFC 3339: \(text)")
        }
        return date
    }
}
