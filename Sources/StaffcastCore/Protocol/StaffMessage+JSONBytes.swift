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

    // Each key with the punctuation before it, as bytes once, spelled by `CodingKeys` (so the
    // two encodings cannot disagree on a key).
    private static let idKey = key(.id, after: "{"), seqKey = key(.seq), eventKey = key(.eventID),
        senderKey = key(.senderID), senderNameKey = key(.senderName), messageKey = key(.message), typeKey = key(.messageType),
        priorityKey = key(.priority), sentAtKey = key(.sentAt), expiresAtKey = key(.expiresAt),
        readTrue = key(.read) + Array("true".utf8) + key(.readCount), readFalse = key(.read) + Array("false".utf8) + key(.readCount),
        escalateKey = key(.escalateAfterMinutes), editedAtKey = key(.editedAt), teamsKey = key(.teams), pollKey = key(.poll),
        answerKey = key(.answer), optionsKey = Array(#"{"options":"#.utf8), null = Array("null".utf8)

    private static func key(_ key: CodingKeys, after punctuation: String = ",") -> [UInt8] {
        Array(#"\#(punctuation)"\#(key.stringValue)":"#.utf8)
    }
}
