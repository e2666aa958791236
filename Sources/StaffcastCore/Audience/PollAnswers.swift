import Foundation

/// `GET /v1/messages/{id}/answers`: a poll's options and counts, who answered what, and who
/// of its audience has not answered (docs/protocol.md, Polls). Pure: built from the audience
/// and the answers.
public struct PollAnswers: Sendable, Equatable, Codable {
    public struct Answer: Sendable, Equatable, Codable {
        public var userID: UUID
        public var displayName: String
        public var option: Int
        public var answeredAt: Date

        public init(userID: UUID, displayName: String, option: Int, answeredAt: Date) {
            self.userID = userID
            self.displayName = displayName
            self.option = option
            self.answeredAt = answeredAt
        }

        enum CodingKeys: String, CodingKey { case option, userID = "user_id", displayName = "display_name", answeredAt = "answered_at" }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            userID = try c.decode(UUID.self, forKey: .userID)
            displayName = try c.decode(String.self, forKey: .displayName)
            option = try c.decode(Int.self, forKey: .option)
            answeredAt = try c.decodeRFC3339(forKey: .answeredAt)
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(userID.uuidString.lowercased(), forKey: .userID)
            try c.encode(displayName, forKey: .displayName)
            try c.encode(option, forKey: .option)
            try c.encode(RFC3339.format(answeredAt), forKey: .answeredAt)
        }
    }

    public var messageID: UUID
    public var options: [String]
    public var counts: [Int]
    public var answers: [Answer]
    public var unanswered: [TeamMember]

    enum CodingKeys: String, CodingKey { case options, counts, answers, unanswered, messageID = "message_id" }

    public init(messageID: UUID, options: [String], answers: [Answer], audience: [TeamMember]) {
        self.messageID = messageID
        self.options = options
        self.answers = answers.sorted { ($0.displayName, $0.userID.uuidString) < ($1.displayName, $1.userID.uuidString) }
        var counts = [Int](repeating: 0, count: options.count)
        for a in answers where counts.indices.contains(a.option) { counts[a.option] += 1 }
        self.counts = counts
        let answered = Set(answers.map(\.userID))
        unanswered = audience.filter { !answered.contains($0.userID) }
            .sorted { ($0.displayName, $0.userID.uuidString) < ($1.displayName, $1.userID.uuidString) }
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        messageID = try c.decode(UUID.self, forKey: .messageID)
        options = try c.decode([String].self, forKey: .options)
        counts = try c.decode([Int].self, forKey: .counts)
        answers = try c.decode([Answer].self, forKey: .answers)
        unanswered = try c.decode([TeamMember].self, forKey: .unanswered)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(messageID.uuidString.lowercased(), forKey: .messageID)
        try c.encode(options, forKey: .options)
        try c.encode(counts, forKey: .counts)
        try c.encode(answers, forKey: .answers)
        try c.encode(unanswered, forKey: .unanswered)
    }
}
