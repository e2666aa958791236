import Foundation
import StaffcastCore

/// The email sent to someone who has not read an urgent or emergency message: plain text,
/// UTF-8, quoted-printable (a message may be one line of thousands of bytes, and SMTP servers
/// refuse lines over RFC 5322's 998), with a link to the app. With a `correction`, the short
/// note that follows one emailed before (sql/021): the corrected text, or that it was
/// withdrawn. Pure.
enum EmailText {
    static func compose(from: String, to: String, name: String, eventName: String, message: StaffMessage,
                        correction: Correction? = nil, appURL: String, messageID: String, now: Date = Date()) -> String {
        let kind = message.messageType == .emergency ? "EMERGENCY" : "Urgent"
        let mark = switch correction { case nil: kind; case .updated: "Corrected"; case .retracted: "Withdrawn" }
        let subject = "[\(mark)] \(eventName): \(oneLine(message.message, max: 80))"
        let date = rfc5322(now)
        let said = switch correction {
        case nil:
            "\(message.senderName) sent this \(kind.lowercased()) message to \(eventName) at \(RFC3339.format(message.sentAt)), and you have not read it yet:"
        case .updated:
            "The \(kind.lowercased()) message \(message.senderName) sent to \(eventName) at \(RFC3339.format(message.sentAt)), which we emailed you, was corrected. It now reads:"
        case .retracted:
            "The \(kind.lowercased()) message \(message.senderName) sent to \(eventName) at \(RFC3339.format(message.sentAt)), which we emailed you, was withdrawn. Disregard it:"
        }
        let body = """
            \(name.isEmpty ? "Hello" : "Hello \(name)"),

            \(said)

            \(message.message)

            Open the staff app to read it and reply: \(appURL)

            -- 
            staffcast
            """
        let headers = [
            "From: staffcast <\(from)>",
            "To: \(headerSafe(name)) <\(to)>",
            "Subject: \(encodedWord(subject))",
            "Date: \(date)",
            "Message-ID: \(messageID)",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: quoted-printable",
            "X-Staffcast-Message: \(message.id.wireText)",
        ]
        // CRLF line ends of at most 76 characters; no line starts with "." (it could end the data early).
        return headers.joined(separator: "\r\n") + "\r\n\r\n" + QuotedPrintable.encode(body) + "\r\n"
    }

    private static func oneLine(_ text: String, max: Int) -> String {
        let flat = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        return flat.count > max ? String(flat.prefix(max - 1)) + "…" : flat
    }

    /// A display name with nothing that could end the header or start another.
    private static func headerSafe(_ text: String) -> String {
        let cleaned = String(text.unicodeScalars.filter { $0.value >= 0x20 && $0 != "<" && $0 != ">" && $0 != "\"" }.map(Character.init))
        return cleaned.allSatisfy(\.isASCII) ? "\"\(cleaned)\"" : encodedWord(cleaned)
    }

    /// RFC 2047 encoded-word (base64, UTF-8) when the text is not plain ASCII.
    private static func encodedWord(_ text: String) -> String {
        let safe = String(text.unicodeScalars.filter { $0.value >= 0x20 }.map(Character.init))
        guard !safe.allSatisfy(\.isASCII) else { return safe }
        return "=?utf-8?B?\(Data(safe.utf8).base64EncodedString())?="
    }
}

/// RFC 5322 dates, e.g. "Tue, 24 Nov 2026 15:00:00 +0000".
private func rfc5322(_ date: Date) -> String {
    let f = DateFormatter()
    f.locale = Locale(identifier: "en_US_POSIX")
    f.timeZone = TimeZone(identifier: "UTC")
    f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
    return f.string(from: date)
}
