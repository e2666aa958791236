import Foundation

/// An email address as staffcast stores it on a profile: one `local@domain`, no display name,
/// nothing that could break an SMTP command or a header. Pure.
public enum EmailAddress {
    /// The trimmed address, or nil for "" (no address); throws `invalid` with a sentence otherwise.
    public static func validate(_ text: String) throws(StaffcastError) -> String? {
        let address = text.trimmingCharacters(in: .whitespaces)
        if address.isEmpty { return nil }
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        let forbidden = address.unicodeScalars.contains { $0.value < 0x21 || $0.value == 0x7F || "<>,;\"()[]\\".unicodeScalars.contains($0) }
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
              !forbidden, (3...254).contains(address.utf8.count) else {
            throw .invalid("'\(address.prefix(80))' is not an email address such as alice@example.org.")
        }
        return address
    }
}
