import Foundation
import StaffcastCore
import StaffcastPostgres

/// The reports of docs/protocol.md (Reports) as CSV: receipts, answers, replies and the audit
/// log, one row per person or entry, written by `CSVWriter` (RFC 4180, formula cells
/// neutralised). Pure: from what the store returned to the bytes of the answer.
enum CSVReports {
    /// True when the request asks for CSV: `?format=csv` or `Accept: text/csv`.
    static func wanted(_ head: HTTPRequestHead) -> Bool {
        if let format = head.query["format"] { return format.lowercased() == "csv" }
        return (head.header("accept") ?? "").lowercased().contains("text/csv")
    }

    /// The UTF-8 byte order mark in front of every CSV: without it Excel reads a double-clicked
    /// file in the machine's legacy code page, and "Çağrı" comes out as mojibake.
    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    static func response(_ csv: CSVWriter, name: String) -> HTTPResponse {
        var r = HTTPResponse(status: 200, contentType: "text/csv; charset=utf-8; header=present", body: byteOrderMark + csv.bytes)
        r.headers.append((name: "content-disposition", value: "attachment; filename=\"\(name).csv\""))
        return r
    }

    static func receipts(_ r: Receipts) -> HTTPResponse {
        // The delivery funnel as one column per way (when it first reached the person), after
        // the columns of earlier versions.
        var csv = CSVWriter(header: ["user_id", "display_name", "read", "read_at", "reply_status", "reply_text"]
            + Reached.channels.map { "reached_\($0)_at" })
        for (person, read) in r.readBy.map({ ($0, true) }) + r.unreadBy.map({ ($0, false) }) {
            let reached = Reached.channels.map { way in person.reached.filter { $0.via == way }.map(\.at).min().map(RFC3339.format) ?? "" }
            csv.append([id(person.userID), person.displayName, read ? "true" : "false", person.readAt.map(RFC3339.format) ?? "",
                        person.reply?.status.rawValue ?? "", person.reply?.text ?? ""] + reached)
        }
        return response(csv, name: "receipts-\(id(r.messageID))")
    }

    static func answers(_ a: PollAnswers) -> HTTPResponse {
        var csv = CSVWriter(header: ["user_id", "display_name", "option", "option_text", "answered_at"])
        for answer in a.answers {
            csv.append([id(answer.userID), answer.displayName, String(answer.option),
                        a.options.indices.contains(answer.option) ? a.options[answer.option] : "", RFC3339.format(answer.answeredAt)])
        }
        for person in a.unanswered { csv.append([id(person.userID), person.displayName, "", "", ""]) }
        return response(csv, name: "answers-\(id(a.messageID))")
    }

    static func replies(_ replies: [Reply], messageID: UUID) -> HTTPResponse {
        var csv = CSVWriter(header: ["user_id", "display_name", "status", "text", "replied_at"])
        for r in replies {
            csv.append([id(r.userID), r.displayName, r.status.rawValue, r.text ?? "", RFC3339.format(r.repliedAt)])
        }
        return response(csv, name: "replies-\(id(messageID))")
    }

    static func audit(_ entries: [Store.AuditEntry], eventID: UUID) -> HTTPResponse {
        var csv = CSVWriter(header: ["at", "actor", "action", "event_id", "user_id", "detail"])
        for e in entries { csv.append([e.at, e.actor, e.action, e.eventID ?? "", e.userID ?? "", e.detail ?? ""]) }
        return response(csv, name: "audit-\(id(eventID))")
    }

    private static func id(_ u: UUID) -> String { u.wireText }
}
