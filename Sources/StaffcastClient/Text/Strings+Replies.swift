import StaffcastCore

extension Strings {
    /// A reply status in words (custom replies show their own text instead).
    public func name(_ s: Reply.Status) -> String {
        switch s {
        case .onMyWay: return self[.replyOnMyWay]
        case .runningLate: return self[.replyRunningLate]
        case .cannotMakeIt: return self[.replyCannotMakeIt]
        case .done: return self[.replyDone]
        case .custom: return ""
        }
    }

    /// A reply as a screen shows it: the status in words and any note, or a custom text.
    public func describe(_ r: Reply) -> String {
        if r.status == .custom { return r.text ?? "" }
        return name(r.status) + (r.text.map { ": \($0)" } ?? "")
    }
}
