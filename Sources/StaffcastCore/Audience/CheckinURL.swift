import Foundation

/// The link printed for a zone's post (`staffcast team checkin-link`), as a QR code staff scan
/// or paste into `staffcast checkin URL`: `BASE/checkin/{event_id}/{zone name, percent-encoded}`.
/// Pure.
public enum CheckinURL {
    /// Characters kept as they are in the zone name's path segment.
    private static let segment: CharacterSet = {
        var s = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        s.insert(charactersIn: "-._~")
        return s
    }()

    public static func make(base: String, event: UUID, zone: String) -> String {
        let trimmed = base.hasSuffix("/") ? String(base.dropLast()) : base
        let name = zone.addingPercentEncoding(withAllowedCharacters: segment) ?? zone
        return "\(trimmed)/checkin/\(event.wireText)/\(name)"
    }

    /// The server's base URL, the event and the zone of a check-in link; nil when it is not one.
    public static func parse(_ url: String) -> (base: String, event: UUID, zone: String)? {
        guard let marker = url.range(of: "/checkin/", options: .backwards) else { return nil }
        let base = String(url[..<marker.lowerBound])
        guard base.hasPrefix("http://") || base.hasPrefix("https://"), base.count > "https://".count else { return nil }
        let rest = url[marker.upperBound...].split(separator: "/", omittingEmptySubsequences: false)
        guard rest.count == 2, let event = UUID(wireText: String(rest[0])),
              let zone = String(rest[1]).removingPercentEncoding, !zone.isEmpty else { return nil }
        return (base, event, zone)
    }
}
