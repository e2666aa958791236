import Foundation

/// JSON written straight into bytes, for the few bodies that are both large and hot: the
/// `subscribed` frames of a storm and the receipts of a 10,000-staff event. (Foundation's
/// JSONEncoder, with its RFC 3339 dates, took longer for 10,000 small receipt objects than the
/// database took to find them.) Everything else uses Codable.
public enum JSONBytes {
    /// A JSON string literal (RFC 8259 escaping).
    public static func appendString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [0x5C, 0x22]
            case UInt8(ascii: "\\"): out += [0x5C, 0x5C]
            case 0x0A: out += [0x5C, UInt8(ascii: "n")]
            case 0x0D: out += [0x5C, UInt8(ascii: "r")]
            case 0x09: out += [0x5C, UInt8(ascii: "t")]
            case 0..<0x20: out += [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// A UUID as a quoted lower-case string, as the wire carries ids.
    public static func appendUUID(_ id: UUID, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        withUnsafeBytes(of: id.uuid) { bytes in
            for (i, b) in bytes.enumerated() {
                if i == 4 || i == 6 || i == 8 || i == 10 { out.append(UInt8(ascii: "-")) }
                out.append(hex[Int(b >> 4)])
                out.append(hex[Int(b & 0xF)])
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// An object member's key with the punctuation before it: `,"name":`, or `{"name":` for
    /// the object's first member.
    public static func appendKey(_ name: StaticString, first: Bool = false, to out: inout [UInt8]) {
        out.append(UInt8(ascii: first ? "{" : ","))
        out.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { out += $0 }
        out.append(UInt8(ascii: "\""))
        out.append(UInt8(ascii: ":"))
    }

    public static func appendInt(_ value: Int, to out: inout [UInt8]) {
        out += Array(String(value).utf8)
    }

    /// A quoted RFC 3339 UTC timestamp with milliseconds (`2026-11-21T15:47:33.120Z`), the same
    /// text as `RFC3339.format`.
    public static func appendRFC3339(_ date: Date, to out: inout [UInt8]) {
        // Whole seconds, then the truncated milliseconds of what is left: exactly how Foundation's
        // ISO 8601 style cuts a Double (so both texts agree to the millisecond).
        let t = date.timeIntervalSince1970
        let seconds = t.rounded(.down)
        let millis = Int64(seconds) * 1_000 + Int64((t - seconds) * 1_000)
        var days = millis >= 0 ? millis / 86_400_000 : (millis - 86_399_999) / 86_400_000
        let msOfDay = Int(millis - days * 86_400_000)
        // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let doe = days - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = Int(doy - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        let year = Int(yoe + era * 400 + (month <= 2 ? 1 : 0))
        func digits(_ v: Int, _ n: Int) {
            var p = 1
            for _ in 1..<n { p *= 10 }
            var v = v
            while p > 0 {
                out.append(UInt8(ascii: "0") + UInt8(v / p))
                v %= p
                p /= 10
            }
        }
        out.append(UInt8(ascii: "\""))
        digits(year, 4); out.append(UInt8(ascii: "-")); digits(month, 2); out.append(UInt8(ascii: "-")); digits(day, 2)
        out.append(UInt8(ascii: "T"))
        digits(msOfDay / 3_600_000, 2); out.append(UInt8(ascii: ":"))
        digits(msOfDay / 60_000 % 60, 2); out.append(UInt8(ascii: ":"))
        digits(msOfDay / 1_000 % 60, 2); out.append(UInt8(ascii: "."))
        digits(msOfDay % 1_000, 3)
        out += [UInt8(ascii: "Z"), UInt8(ascii: "\"")]
    }

    private static let hex = Array("0123456789abcdef".utf8)
}
