import Foundation

extension UUID {
    /// The id given to a command (`name`: how it was given, e.g. "--event"), or a failure that
    /// says so: "--event 'x' is not a UUID".
    init(option name: String, _ text: String) throws(CommandFailure) {
        guard let id = UUID(uuidString: text) else { throw CommandFailure("\(name) '\(text)' is not a UUID\(Self.whereToFind(name))") }
        self = id
    }

    /// Where a person finds the id an option wants (they often type a name instead).
    private static func whereToFind(_ option: String) -> String {
        switch option {
        case "--event": " (staffcast admin event list shows event ids; staff find theirs in the invite they joined with)"
        case "--user": " (staffcast admin user list shows user ids)"
        case "--id": " (staffcast admin token list --user USER shows token ids)"
        default: ""
        }
    }

    /// The MESSAGE_ID argument of a command (`receipts`, `answers`, `edit`…), or a failure that
    /// says so: "'x' is not a message id (a UUID)".
    init(messageID text: String) throws(CommandFailure) {
        guard let id = UUID(uuidString: text) else { throw CommandFailure("'\(text)' is not a message id (a UUID)") }
        self = id
    }
}
