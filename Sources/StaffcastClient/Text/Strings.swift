import Foundation
import StaffcastCore

/// The languages of the staff terminal (`staffcast watch`, `staffcast join`).
public enum Language: String, CaseIterable, Sendable {
    case en, tr

    /// `--lang` if given, else the POSIX locale variables in their order of precedence
    /// (`LC_ALL`, `LC_MESSAGES`, `LANG`): `tr_TR.UTF-8` → Turkish; anything else → English.
    /// Throws for a `--lang` it does not know.
    public static func choose(flag: String?, environment: [String: String]) throws(StaffcastTextError) -> Language {
        if let flag {
            guard let l = parse(flag) else { throw StaffcastTextError(flag) }
            return l
        }
        for key in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            if let value = environment[key], !value.isEmpty { return parse(value) ?? .en }
        }
        return .en
    }

    /// "tr", "tr_TR", "tr_TR.UTF-8", "TR" → .tr; "en…", "C", "POSIX" → .en; else nil.
    static func parse(_ text: String) -> Language? {
        let code = text.lowercased().prefix { $0.isLetter }
        switch code {
        case "tr": return .tr
        case "en", "c", "posix": return .en
        default: return nil
        }
    }
}

/// A `--lang` value that is neither `en` nor `tr`.
public struct StaffcastTextError: Error, CustomStringConvertible {
    public let value: String
    init(_ value: String) { self.value = value }
    public var description: String { "--lang '\(value)' is not a language staffcast speaks: use en or tr" }
}

/// Every sentence the staff terminal shows. A template's `{name}` placeholders are filled by
/// `Strings.text(_:_:)`; every language has every phrase with the same placeholders
/// (StringsTests checks).
public enum Phrase: String, CaseIterable, Sendable {
    // watch: top bar, banners, list
    case connecting, connected, reconnectingIn, offline, accessEnded, unread, dismiss, noMessages, expiresIn
    case notificationsTitle, noNotifications, eventsTitle, loading
    case help1, help2, help3, help4, help5, help6, help7, help8, help9, help10
    // watch: emergencies (the alarm that holds the screen until acknowledged)
    case help11, help12, help13
    case toAcknowledge, alarmReminder, alarmPress, alarmMore, alarmFooter, alarmHint
    case footerWide, footerNarrow
    // watch: the detail view, paging back, mark all read
    case detailFrom, detailSent, detailReadBy, detailEdited, detailFooter, detailLines, olderLoading, olderEnd, acknowledged
    case markedAll
    // watch: replies (the organiser's toolbox)
    case helpReply1, helpReply2, replied, replyOnMyWay, replyRunningLate, replyCannotMakeIt, replyDone
    case now, ago, seconds, minutes, hours, days
    case urgent, high, normal, low, broadcast, alert, emergency
    case staff, admin, owner
    // watch: line mode (stderr)
    case lineReconnecting, lineConnected, lineDisconnected, lineUnknownTerminal
    // join
    case joinNotURL, joinJoined, joinSaved, joinNext, joinGone, joinNotFound, joinRateLimited, joinUnreachable
    case joinTokenExists, joinFailed, joinNotYetValid
}

/// The catalogue: one table per language. Pure.
public struct Strings: Sendable, Equatable {
    public let language: Language
    public init(_ language: Language) { self.language = language }
    public static let english = Strings(.en)

    /// The phrase's template as stored (placeholders unfilled); nil when missing.
    public static func template(_ phrase: Phrase, _ language: Language) -> String? {
        switch language {
        case .en: return englishTable[phrase]
        case .tr: return turkishTable[phrase]
        }
    }

    /// The phrase in this language with `{name}` placeholders filled (English when a phrase
    /// is missing, which the tests forbid).
    public func text(_ phrase: Phrase, _ values: [String: String] = [:]) -> String {
        var s = Self.template(phrase, language) ?? Self.englishTable[phrase] ?? phrase.rawValue
        for (k, v) in values { s = s.replacingOccurrences(of: "{\(k)}", with: v) }
        return s
    }

    public subscript(_ phrase: Phrase) -> String { text(phrase) }

    public func text(_ phrase: Phrase, _ n: Int) -> String { text(phrase, ["n": String(n)]) }

    /// The placeholders of a template, e.g. ["n", "reason"].
    public static func placeholders(_ template: String) -> Set<String> {
        var out = Set<String>()
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            out.insert(String(rest[rest.index(after: open)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return out
    }

    static let englishTable: [Phrase: String] = [
        .connecting: "○ connecting",
        .connected: "● connected",
        .reconnectingIn: "◌ reconnecting in {n} s",
        .offline: "✕ offline: {reason}",
        .accessEnded: "your access to this event has ended",
        .unread: " {n} unread ",
        .dismiss: " [d] dismiss ",
        .noMessages: "  No messages yet. New ones appear here as they are sent.",
        .expiresIn: " expires in {d}",
        .notificationsTitle: " Notifications (Enter marks read, Esc goes back)",
        .noNotifications: "  No notifications.",
        .eventsTitle: " Your events (Enter switches, Esc goes back)",
        .loading: "  Loading…",
        .helpReply1: "   1 2 3 4        answer the selected message: 1 on my way, 2 running late,",
        .helpReply2: "                  3 cannot make it, 4 done (organisers see it at once)",
        .replied: " Replied \"{status}\" to: {message}",
        .replyOnMyWay: "on my way",
        .replyRunningLate: "running late",
        .replyCannotMakeIt: "cannot make it",
        .replyDone: "done",
        .help1: " Keys",
        .help2: "   ↑ ↓ k j PgUp PgDn  move; past the oldest, older messages load",
        .help3: "   Enter          read the selected message in full (marks it read)",
        .help4: "   a              mark every message read (emergencies wait for Shift+A)",
        .help5: "   d  or  Esc     dismiss the top banner (it stays unread)",
        .help6: "   n              your notifications (Enter marks read)",
        .help7: "   e              switch to another of your events",
        .help8: "   ?              this help (any key closes it)",
        .help9: "   q  or  Ctrl-C  quit",
        .help10: " Urgent banners stay until dismissed; urgent and emergency messages ring the bell.",
        .help11: " Emergency and urgent messages take the screen and ring until acknowledged with",
        .help12: " Shift+A (which marks them read); a reminder brings one back. ! marks those still",
        .help13: " to acknowledge.",
        .toAcknowledge: " ! {n} to acknowledge ",
        .alarmReminder: " · REMINDER {n}: not read yet",
        .alarmPress: " Press Shift+A to acknowledge (marks it read).",
        .alarmMore: " {n} more waiting to be acknowledged after this one.",
        .alarmFooter: " A (Shift+a) acknowledge · ↑↓ scroll a long text · Ctrl-C quit",
        .alarmHint: " Press Shift+A to acknowledge this message (it is marked read).",
        .footerWide: " ↑↓ move  ⏎ read  a all read  d dismiss  n notes  e events  ? help  q quit",
        .footerNarrow: " ⏎ read  a all  n notes  e events  ? help  q quit",
        .detailFrom: "From",
        .detailSent: "Sent",
        .detailReadBy: "read by {n}",
        .detailEdited: "edited",
        .detailFooter: " ↑↓ scroll  1 2 3 4 reply  Esc back",
        .detailLines: " lines {from}–{to} of {n} ",
        .olderLoading: "  Loading older messages…",
        .olderEnd: "  — the first message of this event —",
        .acknowledged: " Acknowledged. 1–4 answer it, Enter shows it in full.",
        .markedAll: " {n} marked read.",
        .now: "now",
        .ago: "{d} ago",
        .seconds: "{n}s", .minutes: "{n}m", .hours: "{n}h", .days: "{n}d",
        .urgent: "URGENT", .high: "HIGH", .normal: "NORMAL", .low: "LOW",
        .broadcast: "BROADCAST", .alert: "ALERT", .emergency: "EMERGENCY",
        .staff: "staff", .admin: "admin", .owner: "owner",
        .lineReconnecting: "staffcast: reconnecting (attempt {n})",
        .lineConnected: "staffcast: connected as {name}",
        .lineDisconnected: "staffcast: disconnected ({reason}); retrying in {n} s",
        .lineUnknownTerminal: "staffcast: this machine does not know the terminal type '{term}', so watch prints one line a message (for the full screen: TERM=xterm-256color staffcast watch …)",
        .joinNotURL: "'{url}' is not a join link; it looks like http://HOST:PORT/join/CODE",
        .joinJoined: "Welcome, {name}: you joined event {event} as {level}.",
        .joinSaved: "Your token is saved in {path} (readable only by you).",
        .joinNext: "Next: staffcast watch (this server and event are saved; elsewhere: staffcast watch --server {server} --event {event})",
        .joinGone: "This invite can no longer be used (it expired, was used up or was revoked); ask the organiser for a new one.",
        .joinNotFound: "There is no such invite; check the link.",
        .joinRateLimited: "Too many wrong invite codes from this network; check the link is complete and retry in a few seconds.",
        .joinUnreachable: "Cannot reach {server}: {reason}",
        .joinTokenExists: "{path} already holds a token; give --token-file FILE to save elsewhere, or --force to replace it.",
        .joinFailed: "Could not join: {reason}",
        .joinNotYetValid: "The server has not accepted the new token yet; try staffcast watch again in a few seconds.",
    ]

    static let turkishTable: [Phrase: String] = [
        .helpReply1: "   1 2 3 4         seçili mesajı yanıtlar: 1 yoldayım, 2 gecikiyorum,",
        .helpReply2: "                   3 gelemiyorum, 4 tamam (organizatörler hemen görür)",
        .replied: " \"{status}\" yanıtı gönderildi: {message}",
        .replyOnMyWay: "yoldayım",
        .replyRunningLate: "gecikiyorum",
        .replyCannotMakeIt: "gelemiyorum",
        .replyDone: "tamam",
        .connecting: "○ bağlanıyor",
        .connected: "● bağlı",
        .reconnectingIn: "◌ {n} sn sonra yeniden bağlanacak",
        .offline: "✕ çevrimdışı: {reason}",
        .accessEnded: "bu etkinliğe erişiminiz sona erdi",
        .unread: " {n} okunmamış ",
        .dismiss: " [d] kapat ",
        .noMessages: "  Henüz mesaj yok. Yeni mesajlar gönderildikçe burada görünür.",
        .expiresIn: " {d} içinde geçersiz",
        .notificationsTitle: " Bildirimler (Enter okundu işaretler, Esc geri döner)",
        .noNotifications: "  Bildirim yok.",
        .eventsTitle: " Etkinlikleriniz (Enter geçiş yapar, Esc geri döner)",
        .loading: "  Yükleniyor…",
        .help1: " Tuşlar",
        .help2: "   ↑ ↓ k j PgUp PgDn  gezinir; en eskinin ötesinde eskiler yüklenir",
        .help3: "   Enter           seçili mesajı tam gösterir (okundu işaretler)",
        .help4: "   a               tüm mesajları okundu işaretler (acil durumlar Shift+A ile)",
        .help5: "   d  veya  Esc    üstteki bildirimi kapatır (okunmamış kalır)",
        .help6: "   n               bildirimleriniz (Enter okundu işaretler)",
        .help7: "   e               başka bir etkinliğinize geçer",
        .help8: "   ?               bu yardım (herhangi bir tuş kapatır)",
        .help9: "   q  veya  Ctrl-C çıkış",
        .help10: " Acil bildirimler kapatılana dek kalır; acil ve acil durum mesajları zil çalar.",
        .help11: " Acil ve acil durum mesajları ekranı kaplar ve Shift+A ile onaylanana dek",
        .help12: " zil çalar (onay, okundu işaretler); hatırlatma mesajı geri getirir. ! onay",
        .help13: " bekleyenleri gösterir.",
        .toAcknowledge: " ! {n} onay bekliyor ",
        .alarmReminder: " · HATIRLATMA {n}: henüz okunmadı",
        .alarmPress: " Onaylamak için Shift+A'ya basın (okundu işaretlenir).",
        .alarmMore: " Bundan sonra onay bekleyen {n} mesaj daha var.",
        .alarmFooter: " A (Shift+a) onayla · ↑↓ uzun metni kaydır · Ctrl-C çık",
        .alarmHint: " Bu mesajı onaylamak için Shift+A'ya basın (okundu işaretlenir).",
        .footerWide: " ↑↓ gezin  ⏎ okundu  a tümü okundu  d kapat  n bildirim  e etkinlik  ? yardım  q çık",
        .footerNarrow: " ⏎ okundu  a tümü  n bildirim  e etkinlik  ? yardım  q çık",
        .detailFrom: "Gönderen",
        .detailSent: "Gönderildi",
        .detailReadBy: "{n} kişi okudu",
        .detailEdited: "düzeltildi",
        .detailFooter: " ↑↓ kaydır  1 2 3 4 yanıtla  Esc geri",
        .detailLines: " satır {from}–{to} / {n} ",
        .olderLoading: "  Eski mesajlar yükleniyor…",
        .olderEnd: "  — bu etkinliğin ilk mesajı —",
        .acknowledged: " Onaylandı. 1–4 yanıtlar, Enter tamamını gösterir.",
        .markedAll: " {n} mesaj okundu işaretlendi.",
        .now: "şimdi",
        .ago: "{d} önce",
        .seconds: "{n}sn", .minutes: "{n}dk", .hours: "{n}sa", .days: "{n}g",
        .urgent: "ACİL", .high: "YÜKSEK", .normal: "NORMAL", .low: "DÜŞÜK",
        .broadcast: "DUYURU", .alert: "UYARI", .emergency: "ACİL DURUM",
        .staff: "görevli", .admin: "yönetici", .owner: "sahip",
        .lineReconnecting: "staffcast: yeniden bağlanıyor ({n}. deneme)",
        .lineConnected: "staffcast: {name} olarak bağlandı",
        .lineDisconnected: "staffcast: bağlantı koptu ({reason}); {n} sn sonra yeniden denenecek",
        .lineUnknownTerminal: "staffcast: bu makine '{term}' terminal türünü tanımıyor, bu yüzden watch her mesajı bir satırda yazar (tam ekran için: TERM=xterm-256color staffcast watch …)",
        .joinNotURL: "'{url}' bir katılım bağlantısı değil; şöyle görünür: http://SUNUCU:PORT/join/KOD",
        .joinJoined: "Hoş geldiniz, {name}: {event} etkinliğine {level} olarak katıldınız.",
        .joinSaved: "Anahtarınız {path} dosyasına kaydedildi (yalnızca siz okuyabilirsiniz).",
        .joinNext: "Sonra: staffcast watch (bu sunucu ve etkinlik kaydedildi; başka yerde: staffcast watch --server {server} --event {event})",
        .joinGone: "Bu davet artık kullanılamaz (süresi dolmuş, tükenmiş ya da iptal edilmiş); organizatörden yenisini isteyin.",
        .joinNotFound: "Böyle bir davet yok; bağlantıyı kontrol edin.",
        .joinRateLimited: "Bu ağdan çok fazla yanlış davet kodu denendi; bağlantıyı kontrol edip birkaç saniye sonra yeniden deneyin.",
        .joinUnreachable: "{server} sunucusuna ulaşılamıyor: {reason}",
        .joinTokenExists: "{path} zaten bir anahtar içeriyor; başka yere kaydetmek için --token-file DOSYA, değiştirmek için --force verin.",
        .joinFailed: "Katılınamadı: {reason}",
        .joinNotYetValid: "Sunucu yeni anahtarı henüz kabul etmedi; birkaç saniye sonra staffcast watch komutunu yeniden deneyin.",
    ]

    // MARK: names of protocol values

    /// "URGENT" / "ACİL" (upper-case, as banners and list rows show them).
    public func name(_ p: Priority) -> String { self[Phrase(rawValue: p.rawValue) ?? .normal] }
    /// "BROADCAST" / "DUYURU".
    public func name(_ t: MessageType) -> String { self[Phrase(rawValue: t.rawValue) ?? .broadcast] }
    /// "staff" / "görevli".
    public func name(_ l: AccessLevel) -> String { self[Phrase(rawValue: l.rawValue) ?? .staff] }
}
