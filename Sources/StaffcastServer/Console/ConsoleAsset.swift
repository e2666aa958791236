/// The organiser's web console (docs/protocol.md, Web console): one page, its script and its
/// style, compiled into the binary (so it is there whatever directory the server runs from,
/// with no build step), served with a Content-Security-Policy that allows nothing from another
/// origin and no inline script or style.
enum ConsoleAsset: Equatable, Sendable {
    case page, script, style

    init?(fileName: String) {
        switch fileName {
        case "console.js": self = .script
        case "console.css": self = .style
        default: return nil
        }
    }

    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        + "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    var response: HTTPResponse {
        let (type, text): (String, String)
        switch self {
        case .page: (type, text) = ("text/html; charset=utf-8", ConsolePage.html)
        case .script: (type, text) = ("text/javascript; charset=utf-8", ConsoleScript.source)
        case .style: (type, text) = ("text/css; charset=utf-8", ConsoleStyle.source)
        }
        var r = HTTPResponse.text(200, text, contentType: type)
        r.headers = [(name: "content-security-policy", value: Self.contentSecurityPolicy),
                     (name: "x-content-type-options", value: "nosniff"),
                     (name: "referrer-policy", value: "no-referrer")]
        return r
    }
}
