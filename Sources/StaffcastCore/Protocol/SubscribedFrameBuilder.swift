import Foundation

/// Builds many `subscribed` frames for one event out of the same messages: each message is
/// encoded at most twice (as read and as unread), and each subscriber's frame is those bytes
/// joined. Hand-written because it is the hot path of a reconnect storm: ten thousand frames
/// of fifty messages each would otherwise be half a million message encodings.
///
/// The bytes decode exactly like `ServerFrame.subscribed` encoded by `ServerFrame.encoded()`.
public struct SubscribedFrameBuilder {
    private let messages: [StaffMessage]
    private var unread: [[UInt8]?]
    private var read: [[UInt8]?]
    private let encoder = JSONEncoder()

    public init(messages: [StaffMessage]) {
        self.messages = messages
        unread = Array(repeating: nil, count: messages.count)
        read = Array(repeating: nil, count: messages.count)
    }

    /// The frame for one subscriber: `history` and `readIndices` index into `messages`.
    public mutating func frame(ref: String?, event: EventSummary, history: [Int], readIndices: Set<Int>, unreadCount: Int,
                               more: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256 + history.count * 420)
        out += Array(#"{"op":"subscribed","#.utf8)
        if let ref {
            out += Array(#""ref":"#.utf8)
            Self.appendJSONString(ref, to: &out)
            out.append(UInt8(ascii: ","))
        }
        out += Array(#""event_id":""#.utf8)
        out += Array(event.id.wireText.utf8)
        out += Array(#"","event_name":"#.utf8)
        Self.appendJSONString(event.name, to: &out)
        out += Array(#","access_level":""#.utf8)
        out += Array(event.accessLevel.rawValue.utf8)
        out += Array(#"","history":["#.utf8)
        for (n, i) in history.enumerated() {
            if n > 0 { out.append(UInt8(ascii: ",")) }
            out += encoded(i, read: readIndices.contains(i))
        }
        out += Array(#"],"unread_count":"#.utf8)
        out += Array(String(unreadCount).utf8)
        out += Array((more ? #","more":true}"# : #","more":false}"#).utf8)
        return out
    }

    private mutating func encoded(_ i: Int, read isRead: Bool) -> [UInt8] {
        if isRead, let bytes = read[i] { return bytes }
        if !isRead, let bytes = unread[i] { return bytes }
        var message = messages[i]
        message.read = isRead
        let bytes = (try? encoder.encode(message)).map(Array.init) ?? Array("null".utf8)
        if isRead { read[i] = bytes } else { unread[i] = bytes }
        return bytes
    }

    static func appendJSONString(_ s: String, to out: inout [UInt8]) { JSONBytes.appendString(s, to: &out) }
}
