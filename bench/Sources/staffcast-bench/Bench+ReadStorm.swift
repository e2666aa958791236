import Foundation

/// Everyone marks one emergency read, or answers its poll, at once (`readstorm`, `answerstorm`).
extension Bench {
    /// N distinct staff users, one connection each, get one emergency message; once all have it,
    /// every one sends `mark_read` at once. Wall time from the first mark sent until the last
    /// `read` reply came and the receipts (owner's GET) show all N readers.
    /// `answering`: the answer storm of issue 17 — the emergency is an "Are you safe?" poll
    /// and everyone answers it at once (answering marks read, so read_count settles the same way).
    func readstorm(_ wanted: Int, answering: Bool = false) {
        let title = answering
            ? "\(grouped(wanted)) staff answer one \"Are you safe?\" poll at once: until every `answered` reply came and read_count holds all \(grouped(wanted))"
            : "\(grouped(wanted)) staff mark one emergency read at once: until every `read` reply came and read_by holds all \(grouped(wanted))"
        let target = "10,000 ≤ 1 s"
        func notRun(_ why: String) {
            log("  not run: \(why)")
            rows.append(Row(scenario: title, measured: "—", target: target, met: false, notes: "not run: " + why))
        }
        let tokens = Array(Set(o.readstormTokens)).sorted()
        guard tokens.count >= 2 else {
            notRun("needs --readstorm-tokens, a file of tokens of distinct staff users (scripts/bench.sh creates them when readstorm is selected)")
            return
        }
        let n = min(wanted, tokens.count)
        var notes: [String] = []
        if n < wanted {
            notes.append("only \(grouped(n)) distinct staff users were created (of \(grouped(wanted)) wanted): measured with \(grouped(n))")
            log("  only \(grouped(tokens.count)) distinct tokens in \(o.readstormTokensFile): measuring with \(grouped(n)) staff")
        }
        closePool()
        let event = o.readstormEvent.isEmpty ? o.event : o.readstormEvent
        let s = openPool(n, window: o.stormWindow, tokens: Array(tokens.prefix(n)), event: event)
        poolSize = -1 // these connections (one user each) serve no other scenario
        let subscribed = s.subscribed
        guard subscribed > 0 else { notRun("no subscriber connected: \(s.failureText)"); closePool(); return }
        if subscribed < n { notes.append("only \(grouped(subscribed))/\(grouped(n)) subscribed (\(s.failureText))") }

        // The emergency message, over HTTP (its id comes back in the 201).
        let base = currentBase(event: event)
        eachLoop { $0.resetTraffic(base: base) }
        let body = answering
            ? #"{"message":"\#(messageText(0, now: monoNs())) answerstorm: are you safe?","message_type":"emergency","priority":"urgent","poll":{"options":"safe"}}"#
            : #"{"message":"\#(messageText(0, now: monoNs())) readstorm","message_type":"emergency","priority":"urgent"}"#
        guard let posted = Net.request(host: o.host, port: o.port, method: "POST", path: "/v1/events/\(event)/messages",
                                       token: o.publisherToken, json: body) else {
            notRun("the emergency POST got no answer"); closePool(); return
        }
        let postBytes = Array(posted.body.utf8)
        let (messageID, seq) = postBytes.withUnsafeBufferPointer { b in
            (shortString(after: Needles.id, in: b.baseAddress!, b.count), integer(after: Needles.seq, in: b.baseAddress!, b.count))
        }
        guard posted.status == 201, let messageID, let seq else {
            notRun("the emergency POST was answered \(posted.status) \(posted.body.prefix(200))"); closePool(); return
        }
        if event == o.event { knownMaxSeq = max(knownMaxSeq, seq) }
        // Everyone has it (or 30 s).
        let waitStart = monoNs()
        var delivered = 0
        while serverAlive && monoNs() - waitStart < 30_000_000_000 {
            delivered = eachLoop { $0.traffic.deliveries }.reduce(0, +)
            if delivered >= subscribed { break }
            usleep(2_000)
        }
        log("  emergency message \(messageID) (seq \(seq)) reached \(grouped(delivered))/\(grouped(subscribed)) in \(ms(Double(monoNs() - waitStart) / 1e6))")
        if delivered < subscribed { notes.append("the emergency reached only \(grouped(delivered))/\(grouped(subscribed)) within 30 s") }

        // The storm: every loop sends its marks as soon as it wakes.
        let cpu0 = serverCPU(), pg0 = postgresCPU()
        eachLoop { $0.beginMarking(messageID: messageID, answering: answering) }
        let receiptsPath = "/v1/messages/\(messageID)/receipts"
        var readCount: Int64 = -1
        var receiptsAtNs: Int64 = 0
        var receiptsStatus = 0
        var receiptsGetMs = Histogram()
        var polls = 0
        var timedOut = false
        let stormStart = monoNs()
        var lastChange = stormStart
        var lastSeen = (-1, -1 as Int64)
        func pollReceipts() {
            let t0 = monoNs()
            guard let r = Net.get(host: o.host, port: o.port, path: receiptsPath, token: o.publisherToken) else { receiptsStatus = 0; return }
            let t1 = monoNs()
            polls += 1
            receiptsStatus = r.status
            receiptsGetMs.add(us: (t1 - t0) / 1_000)
            let bytes = Array(r.body.utf8)
            if r.status == 200, let c = bytes.withUnsafeBufferPointer({ integer(after: Needles.readCount, in: $0.baseAddress!, $0.count) }) {
                readCount = c
                if c >= Int64(subscribed) && receiptsAtNs == 0 { receiptsAtNs = t1 }
            }
        }
        while serverAlive {
            var sent = 0, answered = 0, unanswered = 0
            for l in loops {
                l.lock.lock()
                sent += l.marks.sent
                answered += l.marks.replies
                for v in l.marks.errors.values { answered += v }
                unanswered += l.marksUnanswered
                l.lock.unlock()
            }
            let allAnswered = sent >= subscribed && unanswered == 0
            let now = monoNs()
            if (answered, readCount) != lastSeen { lastSeen = (answered, readCount); lastChange = now }
            // The receipts, back to back, once every mark is answered (a reply comes after its
            // commit, so they should show all N at once), or when the replies stall for 1 s. Not
            // before: each GET serialises the whole roster on the server while it is marking.
            if receiptsAtNs == 0 && (allAnswered || now - lastChange > 1_000_000_000) { pollReceipts() }
            if allAnswered && receiptsAtNs > 0 { break }
            if now - stormStart > Int64(o.readstormTimeout * 1e9) || now - lastChange > 15_000_000_000 { timedOut = true; break }
            usleep(allAnswered ? 1_000 : 2_000)
        }
        let serverCPUUsed = serverCPU() - cpu0, pgCPUUsed = postgresCPU() - pg0
        var m = MarkStats()
        var unanswered = 0
        for l in loops {
            l.lock.lock()
            let x = l.marks
            unanswered += l.marksUnanswered
            l.lock.unlock()
            m.sent += x.sent
            m.replies += x.replies
            m.duplicateReplies += x.duplicateReplies
            m.wrongMessage += x.wrongMessage
            for (k, v) in x.errors { m.errors[k, default: 0] += v }
            if m.errorSample == nil { m.errorSample = x.errorSample }
            if x.firstSendNs > 0 { m.firstSendNs = m.firstSendNs == 0 ? x.firstSendNs : min(m.firstSendNs, x.firstSendNs) }
            m.lastSendNs = max(m.lastSendNs, x.lastSendNs)
            m.lastReplyNs = max(m.lastReplyNs, x.lastReplyNs)
            m.markToReply.merge(x.markToReply)
        }
        // A few more GETs of the settled receipts: how fast they answer with N readers.
        var settled = Histogram()
        var roster = 0
        for _ in 0..<5 {
            let t0 = monoNs()
            if let r = Net.get(host: o.host, port: o.port, path: receiptsPath, token: o.publisherToken), r.status == 200 {
                settled.add(us: (monoNs() - t0) / 1_000)
                let bytes = Array(r.body.utf8)
                bytes.withUnsafeBufferPointer { b in
                    if let c = integer(after: Needles.readCount, in: b.baseAddress!, b.count) { readCount = c }
                    // read_by + unread_by: the event's roster without the sender.
                    var at = 0
                    roster = 0
                    while at < b.count {
                        let k = Needles.userID.find(b.baseAddress! + at, b.count - at)
                        if k < 0 { break }
                        roster += 1
                        at += k + Needles.userID.count
                    }
                }
            }
        }
        let errors = m.errors.values.reduce(0, +)
        let first = m.firstSendNs
        let toReplies = m.lastReplyNs > first && first > 0 ? Double(m.lastReplyNs - first) / 1e9 : nil
        let toReceipts = receiptsAtNs > first && first > 0 ? Double(receiptsAtNs - first) / 1e9 : nil
        let settledAt: Double? = (toReplies != nil && toReceipts != nil && unanswered == 0) ? max(toReplies!, toReceipts!) : nil
        log("  \(grouped(m.sent)) mark_read sent in \(ms(Double(m.lastSendNs - m.firstSendNs) / 1e6)); \(grouped(m.replies)) `read` replies, "
            + "\(errors) errors\(m.errorSample.map { " (first: \($0))" } ?? ""), \(unanswered) unanswered, \(m.duplicateReplies) duplicate replies, "
            + "\(m.wrongMessage) naming another message")
        log("  last reply \(toReplies.map { fmt("%.3f s", $0) } ?? "—") after the first mark; receipts read_count = \(subscribed) at "
            + "\(toReceipts.map { fmt("%.3f s", $0) } ?? "—") (\(polls) polls, GET p50 \(ms(receiptsGetMs.percentileMs(0.5))) max \(ms(receiptsGetMs.maxMs))); "
            + "final read_count \(readCount) (want \(grouped(subscribed)))")
        log("  mark→reply p50 \(ms(m.markToReply.percentileMs(0.5))) p99 \(ms(m.markToReply.percentileMs(0.99))); "
            + "settled receipts GET (\(grouped(roster)) in read_by + unread_by) p50 \(ms(settled.percentileMs(0.5))) max \(ms(settled.maxMs)); "
            + "CPU: server \(d(serverCPUUsed, 2)) s, PostgreSQL \(d(pgCPUUsed, 2)) s")
        notes.append("all replies \(toReplies.map { fmt("%.3f s", $0) } ?? "—"), receipts show \(grouped(subscribed)) at \(toReceipts.map { fmt("%.3f s", $0) } ?? "never")")
        notes.append("final read_count \(readCount)\(readCount == Int64(subscribed) ? "" : " (want \(grouped(subscribed)))")")
        notes.append("\(errors) replies with errors\(m.errors.isEmpty ? "" : " (" + m.errors.map { "\($0.value)× \($0.key)" }.joined(separator: ", ") + ")")"
                     + (unanswered > 0 ? ", \(grouped(unanswered)) marks unanswered" : "")
                     + (m.duplicateReplies > 0 ? ", \(m.duplicateReplies) duplicate replies" : "")
                     + (m.wrongMessage > 0 ? ", \(m.wrongMessage) replies naming another message" : ""))
        notes.append("mark→reply p50 \(ms(m.markToReply.percentileMs(0.5))) p99 \(ms(m.markToReply.percentileMs(0.99)))")
        if roster > subscribed { notes.append("the event's roster is \(grouped(roster + 1)) (cached users beyond N stay unread)") }
        notes.append("receipts GET with \(grouped(Int(max(0, readCount)))) readers of \(grouped(roster)) p50 \(ms(settled.percentileMs(0.5))) max \(ms(settled.maxMs)) (issue 8: ≤ 50 ms at 10,000)")
        notes.append("CPU server \(d(serverCPUUsed, 2)) s, PostgreSQL \(d(pgCPUUsed, 2)) s")
        if timedOut { notes.append("gave up after \(d(Double(monoNs() - stormStart) / 1e9, 0)) s") }
        if receiptsStatus != 200 && receiptsStatus != 0 { notes.append("receipts answered HTTP \(receiptsStatus)") }
        if subscribed < 10_000 { notes.append("the target is for 10,000 staff") }
        let met: Bool? = subscribed >= 10_000
            ? (settledAt ?? .infinity) <= 1 && readCount == Int64(subscribed) && errors == 0 && subscribed == wanted
            : nil
        rows.append(Row(scenario: title, measured: settledAt.map { fmt("%.3f s", $0) } ?? "—", target: target, met: met,
                        notes: notes.joined(separator: "; ")))
        closePool()
    }
}
