import Foundation

/// The files of the organiser's web console (docs/protocol.md, Web console), kept as plain
/// `.html/.css/.js` under `Web/Assets/` and compiled into the binary by SwiftPM's
/// `embedInCode` rule (the generated `PackageResources`), so the server needs no file at run
/// time, whatever directory it runs from. Served with a Content-Security-Policy that allows
/// nothing from another origin and no inline script or style, and an ETag so that a browser
/// revalidates instead of downloading again. Immutable after start: any thread may read it.
enum WebAsset: CaseIterable, Equatable, Sendable {
    case consolePage, consoleScript, consoleStyle

    /// The asset a path under `/console/` names (`console.js`), nil for any other file.
    init?(consoleFile name: String) {
        switch name {
        case "console.js": self = .consoleScript
        case "console.css": self = .consoleStyle
        default: return nil
        }
    }

    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        + "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    var bytes: [UInt8] {
        switch self {
        case .consolePage: PackageResources.console_html
        case .consoleScript: PackageResources.console_js
        case .consoleStyle: PackageResources.console_css
        }
    }

    var contentType: String {
        switch self {
        case .consolePage: "text/html; charset=utf-8"
        case .consoleScript: "text/javascript; charset=utf-8"
        case .consoleStyle: "text/css; charset=utf-8"
        }
    }

    /// A strong validator of the bytes: the same build serves the same tag on every server.
    var etag: String { Self.etags[self] ?? "" }

    private static let etags: [WebAsset: String] = Dictionary(uniqueKeysWithValues: allCases.map { asset in
        // FNV-1a (64 bit): a cache validator that changes when the file does, not a security measure.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in asset.bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let hex = String(hash, radix: 16)
        return (asset, "\"" + String(repeating: "0", count: 16 - hex.count) + hex + "\"")
    })

    /// The answer to a GET (or HEAD): `304` without a body when `ifNoneMatch` names the current
    /// tag, else the file. `no-cache`: the browser keeps it but asks each time, so a new server
    /// version is picked up at once (the URLs carry no version).
    func response(ifNoneMatch: String?) -> HTTPResponse {
        let fresh = ifNoneMatch.map { Self.matches($0, etag) } ?? false
        var r = HTTPResponse(status: fresh ? 304 : 200, contentType: contentType, body: fresh ? [] : bytes)
        r.cacheControl = "no-cache"
        r.headers = [(name: "etag", value: etag),
                     (name: "content-security-policy", value: Self.contentSecurityPolicy),
                     (name: "x-content-type-options", value: "nosniff"),
                     (name: "referrer-policy", value: "no-referrer")]
        return r
    }

    /// `If-None-Match`: `*` or a comma-separated list of tags, weak ones (`W/"…"`) compared weakly.
    static func matches(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").contains { part in
            let tag = part.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }
}
