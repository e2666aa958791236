import Foundation

/// The question a message asks (docs/protocol.md, Polls): 2 to 6 options, answered by index.
/// The safety check is the poll `["I am safe", "I need help"]`; "I need help" notifies the
/// event's admins and owners at once.
public struct Poll: Sendable, Equatable, Codable {
    public var options: [String]

    public static let safetyOptions = ["I am safe", "I need help"]
    /// The index of "I need help" in a safety check.
    public static let needHelp = 1
    public static let maxOptionBytes = 100

    /// Options are stored without spaces at either end ("Yes " and "Yes" are one option, not
    /// two that look alike) and must be one line: `staffcast answers` prints one a line.
    public init(options: [String]) throws(StaffcastError) {
        guard (2...6).contains(options.count) else {
            throw .invalid("A poll has 2 to 6 options; got \(options.count).")
        }
        let options = options.map { $0.trimmingCharacters(in: .whitespaces) }
        for option in options {
            guard !option.isEmpty else { throw .invalid("A poll option is empty.") }
            guard option.utf8.count <= Self.maxOptionBytes else {
                throw .invalid("A poll option may be at most \(Self.maxOptionBytes) bytes.")
            }
            try TextRules.requireOneLine(option, field: "poll option")
        }
        guard Set(options).count == options.count else { throw .invalid("Two poll options are the same.") }
        self.options = options
    }

    /// The safety check.
    public static var safety: Poll { Poll(unchecked: safetyOptions) }

    /// Options read back from the database (already checked when stored).
    public init(unchecked options: [String]) { self.options = options }

    public var isSafetyCheck: Bool { options == Self.safetyOptions }

    /// `"safe"` or a comma-separated list ("Yes,No"), as the command line takes it.
    public static func parse(_ text: String) throws(StaffcastError) -> Poll {
        if text == "safe" { return .safety }
        return try Poll(options: text.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) })
    }

    /// The `poll` field of a send: `{"options": [..]}` or `{"options": "safe"}`; nil when
    /// absent or `null`.
    public static func from(_ send: WireFields) throws(StaffcastError) -> Poll? {
        guard let object = try send.object("poll", notAnObject:
            .invalid("poll must be an object: {\"options\": [\"Yes\", \"No\"]} or {\"options\": \"safe\"}.")) else { return nil }
        try object.refuseUnknown(KnownFields(["options"]), in: "poll")
        if let s = try? object.string("options") {
            guard s == "safe" else { throw .invalid("poll options must be an array of 2 to 6 strings, or \"safe\".") }
            return .safety
        }
        guard let list = try object.strings("options") else {
            throw .invalid("poll needs \"options\": an array of 2 to 6 strings, or \"safe\".")
        }
        return try Poll(options: list)
    }

    public func validate(option: Int) throws(StaffcastError) {
        guard options.indices.contains(option) else {
            throw .invalid("option must be from 0 to \(options.count - 1) (the poll has \(options.count) options); got \(option).")
        }
    }
}

/// The live count of a poll, to the event's subscribed admins and owners: `poll_tally`.
public struct PollTally: Sendable, Equatable {
    public var messageID: UUID
    public var eventID: UUID
    /// Answers per option, in option order.
    public var counts: [Int]
    /// How many have answered.
    public var answered: Int
    /// How many the poll is for (its audience but the sender).
    public var audience: Int

    public init(messageID: UUID, eventID: UUID, counts: [Int], answered: Int, audience: Int) {
        self.messageID = messageID
        self.eventID = eventID
        self.counts = counts
        self.answered = answered
        self.audience = audience
    }
}
