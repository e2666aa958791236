import Foundation

/// The frames every client sends in a reconnect storm — `subscribe` and `ping`, flat objects
/// of plain ASCII strings and whole numbers — read straight from the bytes. The general way
/// (JSONSerialization when this was written: an `NSDictionary` of `NSNumber`s per frame) was
/// 5–6 % of a storm's server CPU. Anything else (another op, an escape, a non-ASCII byte, a
/// fraction, an unknown or repeated key, a value that would be refused) returns nil and goes
/// the general way (`ClientFrame+Codable`), which gives the same answer for these frames
/// (WireCodecTests) and the precise error for the rest.
extension ClientFrameDecoder {
    static func decodePlain(_ bytes: [UInt8]) -> ClientFrame? {
        bytes.withUnsafeBufferPointer { buffer -> ClientFrame? in
            var scanner = PlainScanner(buffer)
            var op: String?, ref: String?, eventID: String?, sinceSeq: Int64?
            var seen: UInt8 = 0
            guard scanner.take(UInt8(ascii: "{")) else { return nil }
            if scanner.take(UInt8(ascii: "}")) { return nil } // no op: the general way says so
            repeat {
                guard let key = scanner.string(), scanner.take(UInt8(ascii: ":")) else { return nil }
                let bit: UInt8
                switch key {
                case "op": bit = 1; guard let v = scanner.string() else { return nil }; op = v
                case "ref": bit = 2; guard let v = scanner.string() else { return nil }; ref = v
                case "event_id": bit = 4; guard let v = scanner.string() else { return nil }; eventID = v
                case "since_seq": bit = 8; guard let v = scanner.wholeNumber() else { return nil }; sinceSeq = v
                default: return nil
                }
                guard seen & bit == 0 else { return nil }
                seen |= bit
            } while scanner.take(UInt8(ascii: ","))
            guard scanner.take(UInt8(ascii: "}")), scanner.atEnd else { return nil }
            switch op {
            case "subscribe":
                guard let eventID, let id = UUID(wireText: eventID) else { return nil }
                return ClientFrame(ref: ref, request: .subscribe(eventID: id, sinceSeq: sinceSeq))
            case "ping":
                guard eventID == nil, sinceSeq == nil else { return nil }
                return ClientFrame(ref: ref, request: .ping)
            default:
                return nil
            }
        }
    }
}

/// Reads the few JSON tokens `decodePlain` accepts; nil for anything else.
private struct PlainScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var i = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    /// The byte `b` (after white space), consumed.
    mutating func take(_ b: UInt8) -> Bool {
        skipSpace()
        guard i < bytes.count, bytes[i] == b else { return false }
        i += 1
        return true
    }

    var atEnd: Bool {
        mutating get {
            skipSpace()
            return i == bytes.count
        }
    }

    /// A string of printable ASCII without escapes.
    mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = i
        while i < bytes.count, bytes[i] != UInt8(ascii: "\"") {
            guard bytes[i] >= 0x20, bytes[i] < 0x7F, bytes[i] != UInt8(ascii: "\\") else { return nil }
            i += 1
        }
        guard i < bytes.count else { return nil }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        i += 1
        return text
    }

    /// A non-negative whole number of at most 15 digits, without a leading zero, fraction or exponent.
    mutating func wholeNumber() -> Int64? {
        skipSpace()
        let start = i
        var value: Int64 = 0
        while i < bytes.count, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") {
            // Only the first 15 digits count (more is refused below): 20 digits overflowed
            // Int64 and trapped, taking the server down with one frame (attack round 3).
            if i - start < 15 { value = value * 10 + Int64(bytes[i] - UInt8(ascii: "0")) }
            i += 1
        }
        let digits = i - start
        guard digits > 0, digits <= 15, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") || bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") { return nil }
        return value
    }
}
