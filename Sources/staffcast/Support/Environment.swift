import Foundation

/// A `STAFFCAST_…` environment variable; an empty value counts as unset everywhere, so
/// `STAFFCAST_TOKEN= staffcast …` means "no token" rather than "the empty token".
func environment(_ name: String) -> String? {
    guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
    return value
}
