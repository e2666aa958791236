import Foundation

/// `GET /v1/messages/{id}/answers`: a poll's options and counts, who answered what, and who
/// of its audience has not answered (docs/protocol.md, Polls). Pure: built from the audience
/// and the answers.
public struct PollAnswers: Sendable, Equatable, Codable {
    public struct Answer: Sendable, Equatable, Codable {
        @WireUUID public var userID: UUID
        public var displayName: String
        public var option: Int
        @WireDate public var answeredAt: Date

        public init(userID: UUID, displayName: String, option: Int, answeredAt: Date) {
            self.userID = userID
            self.displayName = displayName
            self.option = option
            self.answeredAt = answeredAt
        }

        enum CodingKeys: String, CodingKey { case option, userID = "user_id", displayName = "display_name", answeredAt = "answered_at" }
    }

    @WireUUID public var messageID: UUID
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
}
