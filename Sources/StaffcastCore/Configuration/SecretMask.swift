import Foundation

/// How secrets are hidden in printouts and logs: a secret key's whole value, or the password
/// inside a URL (`smtp://user:PASSWORD@host`, `postgresql://…?password=…`).
public enum SecretMask {
    /// What stands in for a hidden value.
    public static let placeholder = "***"

    /// `url` with the password of its user part (and any `password=` parameter) hidden; also a
    /// libpq `key=value` conninfo, whose value runs to unescaped white space (`&` and `\ ` are
    /// part of it) or is quoted with spaces and `\'` inside (`password='two words'` showed
    /// `password=*** words'`). In a URL's query a value ends at `&`.
    public static func hidingPassword(in url: String) -> String {
        var text = url
        if var parts = URLComponents(string: url), parts.password != nil {
            parts.password = placeholder
            text = parts.string ?? placeholder
        }
        let value = text.contains("://") ? #"[^&\s]+"# : #"'(?:[^'\\]|\\.)*'?|(?:\\.|[^\s\\])+"#
        return text.replacingOccurrences(of: #"password\s*=\s*(?:"# + value + ")", with: "password=" + placeholder,
                                         options: .regularExpression)
    }
}
