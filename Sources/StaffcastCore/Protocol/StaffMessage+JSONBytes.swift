import Foundation

/// A message object written straight into bytes: the same fields and values as its Codable
/// encoding (`StaffMessage.swift`; docs/protocol.md, Message), without Foundation's JSONEncoder.
/// Every committed send is encoded once for its sender's answer (`sent`, or the HTTP 201) on
/// the worker that committed the batch, and once for live fan-out (`message`): with the
/// encoder that was most of a send's cost after its commit, paid one send after another.
extension StaffMessage {
    public func appendJSON(to out: inout [UInt8]) {
        out += Self.idKey
        JSONBytes.appendUUID(id, to: &out)
        out += Self.seqKey
        out += Array(String(seq).utf8)
        out += Self.eventKey
        JSONBytes.appendUUID(eventID, to: &out)
        out += Self.senderKey
        JSONBytes.appendUUID(senderID, to: &out)
        out += Self.senderNameKey
        JSONBytes.appendString(senderName, to: &out)
        out += Self.messageKey
        JSONBytes.appendString(message, to: &out)
        out += Self.typeKey
        JSONBytes.appendString(messageType.rawValue, to: &out)
        out += Self.priorityKey
        JSONBytes.appendString(priority.rawValue, to: &out)
        out += Self.sentAtKey
        JSONBytes.appendRFC3339(sentAt, to: &out)
        out += Self.expiresAtKey
        if let expiresAt { JSONBytes.appendRFC3339(expiresAt, to: &out) } else { out += Self.null }
        out += read ? Self.readTrue : Self.readFalse
        JSONBytes.appendInt(readCount, to: &out)
        out += Self.escalateKey
        if let escalateAfterMinutes { JSONBytes.appendInt(escalateAfterMinutes, to: &out) } else { out += Self.null }
        out += Self.editedAtKey
        if let editedAt { JSONBytes.appendRFC3339(editedAt, to: &out) } else { out += Self.null }
        out += Self.teamsKey
        Self.appendStrings(teams, to: &out)
        out += Self.pollKey
        if let poll {
            out += Self.optionsKey
            Self.appendStrings(poll.options, to: &out)
            out.append(UInt8(ascii: "}"))
        } else {
            out += Self.null
        }
        out += Self.answerKey
        if let answer { JSONBytes.appendInt(answer, to: &out) } else { out += Self.null }
        out.append(UInt8(ascii: "}"))
    }

    /// The message object alone (the HTTP API's answer to a send).
    public var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(400 + message.utf8.count)
        appendJSON(to: &out)
        return out
    }

    private static func appendStrings(_ strings: [String], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (i, s) in strings.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONBytes.appendString(s, to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    private static let idKey = Array(#"{"id":"#.utf8)
    private static let seqKey = Array(#","seq":"#.utf8)
    private static let eventKey = Array(#","event_id":"#.utf8)
    private static let senderKey = Array(#","sender_id":"#.utf8)
    private static let senderNameKey = Array(#","sender_name":"#.utf8)
    private static let messageKey = Array(#","message":"#.utf8)
    private static let typeKey = Array(#","message_type":"#.utf8)
    private static let priorityKey = Array(#","priority":"#.utf8)
    private static let sentAtKey = Array(#","sent_at":"#.utf8)
    private static let expiresAtKey = Array(#","expires_at":"#.utf8)
    private static let readTrue = Array(#","read":true,"read_count":"#.utf8)
    private static let readFalse = Array(#","read":false,"read_count":"#.utf8)
    private static let escalateKey = Array(#","escalate_after_minutes":"#.utf8)
    private static let editedAtKey = Array(#","edited_at":"#.utf8)
    private static let teamsKey = Array(#","teams":"#.utf8)
    private static let pollKey = Array(#","poll":"#.utf8)
    private static let optionsKey = Array(#"{"options":"#.utf8)
    private static let answerKey = Array(#","answer":"#.utf8)
    private static let null = Array("null".utf8)
}
