import Crypto
import Foundation
import StaffcastCore

/// The files of the organiser's web console and of the staff app (docs/protocol.md, Web console,
/// The staff app), kept as plain
/// `.html/.css/.js` under `Web/Assets/` and compiled into the binary by SwiftPM's
/// `embedInCode` rule (the generated `PackageResources`), so the server needs no file at run
/// time, whatever directory it runs from. Served with a Content-Security-Policy that allows
/// nothing from another origin and no inline script or style, and an ETag so that a browser
/// revalidates instead of downloading again. Immutable after start: any thread may read it.
enum WebAsset: String, CaseIterable, Equatable, Sendable {
    // The raw value is the file's name under `/console/` or `/app/` (the pages: their own path).
    case consolePage = "/console", consoleScript = "console.js", consoleStyle = "console.css"
    /// The console's other ES modules, imported by `console.js` (one part of the console each).
    case consoleCore = "console-core.js", consoleSocket = "console-socket.js", consoleMessages = "console-messages.js"
    case consolePeople = "console-people.js", consoleSend = "console-send.js", consoleInvites = "console-invites.js"
    case appPage = "/app", appScript = "app.js", appText = "app-text.js", appStyle = "app.css", serviceWorker = "sw.js"
    case manifest = "manifest.webmanifest", iconSVG = "icon.svg", icon192 = "icon-192.png", icon512 = "icon-512.png"
    /// The staff app's other ES modules, imported by `app.js`.
    case appState = "app-state.js", appSocket = "app-socket.js", appRender = "app-render.js", appPush = "app-push.js"
    case appBackground = "app-background.js"
    /// What both pages use (`Assets/shared/`: the retry waits, the query that subscribes in the
    /// WebSocket's URL): served under `/app/` and `/console/` alike, so that neither page loads
    /// a file from the other's folder.
    case backoff = "backoff.js", subscribeURL = "subscribe-url.js"

    /// The asset a path under `/console/` names (`console.js`, `backoff.js`), nil for any other file.
    init?(consoleFile name: String) {
        guard let asset = WebAsset(rawValue: name), asset.isConsole || asset.isShared else { return nil }
        self = asset
    }

    /// Served to both pages.
    var isShared: Bool { self == .backoff || self == .subscribeURL }

    /// The asset a path under `/app/` names (`app.js`, `sw.js`, `backoff.js`, …), nil for any other file.
    init?(appFile name: String) {
        guard let asset = WebAsset(rawValue: name), !asset.isConsole else { return nil }
        self = asset
    }

    var isConsole: Bool {
        switch self {
        case .consolePage, .consoleScript, .consoleStyle, .consoleCore, .consoleSocket, .consoleMessages, .consolePeople,
             .consoleSend, .consoleInvites: true
        default: false
        }
    }

    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        + "connect-src 'self'; manifest-src 'self'; worker-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// What is served: the file, except the service worker, which the server writes the app
    /// shell's manifest in front of (`serviceWorkerBytes`).
    var bytes: [UInt8] { self == .serviceWorker ? Self.serviceWorkerBytes : fileBytes }

    /// The files the staff app's service worker keeps, all of one version or none (sw.js).
    static let appShell: [WebAsset] = [.appPage, .appStyle, .appText, .appScript, .appState, .appSocket, .appRender, .appPush,
                                       .appBackground, .backoff, .subscribeURL, .manifest, .iconSVG, .icon192]

    /// Where the app asks for this file (`/app`, `/app/app.js`, …).
    var appPath: String { self == .appPage ? "/app" : "/app/" + rawValue }

    /// sw.js with this build's shell in front: `SHELL_FILES` (path → SHA-256 of the file, hex)
    /// and `SHELL_VERSION` (one digest over them). A new build of any file is a new worker,
    /// which stores the whole new set before it replaces the old one, and refuses a file whose
    /// bytes are not the ones named (another server version mid-upgrade, a captive portal's
    /// page, a proxy's rewrite: the check is of the content, which any proxy leaves as is).
    private static let serviceWorkerBytes: [UInt8] = {
        let files = appShell.map { (path: $0.appPath, digest: sha256Hex($0.fileBytes)) }
        // Paths are plain and digests hex: nothing to escape in the JavaScript literal.
        let entries = files.map { "  \"\($0.path)\": \"\($0.digest)\"" }
        let version = String(sha256Hex(Array(files.map(\.digest).joined().utf8)).prefix(16))
        let head = "\"use strict\";\n// Written by the server (WebAsset.serviceWorkerBytes): this build's app shell.\n"
            + "const SHELL_VERSION = \"\(version)\";\n"
            + "const SHELL_FILES = {\n" + entries.joined(separator: ",\n") + "\n};\n"
        return Array(head.utf8) + PackageResources.sw_js
    }()

    private static func sha256Hex(_ bytes: [UInt8]) -> String {
        var hex: [UInt8] = []
        for byte in SHA256.hash(data: bytes) {
            hex.append(HexDigit.lowercase[Int(byte >> 4)])
            hex.append(HexDigit.lowercase[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    private var fileBytes: [UInt8] {
        switch self {
        case .consolePage: PackageResources.console_html
        case .consoleScript: PackageResources.console_js
        case .consoleStyle: PackageResources.console_css
        case .consoleCore: PackageResources.console_core_js
        case .consoleSocket: PackageResources.console_socket_js
        case .consoleMessages: PackageResources.console_messages_js
        case .consolePeople: PackageResources.console_people_js
        case .consoleSend: PackageResources.console_send_js
        case .consoleInvites: PackageResources.console_invites_js
        case .appPage: PackageResources.app_html
        case .appScript: PackageResources.app_js
        case .appText: PackageResources.app_text_js
        case .appState: PackageResources.app_state_js
        case .appSocket: PackageResources.app_socket_js
        case .appRender: PackageResources.app_render_js
        case .appPush: PackageResources.app_push_js
        case .appBackground: PackageResources.app_background_js
        case .backoff: PackageResources.backoff_js
        case .subscribeURL: PackageResources.subscribe_url_js
        case .appStyle: PackageResources.app_css
        case .serviceWorker: PackageResources.sw_js
        case .manifest: PackageResources.manifest_webmanifest
        case .iconSVG: PackageResources.icon_svg
        case .icon192: PackageResources.icon_192_png
        case .icon512: PackageResources.icon_512_png
        }
    }

    var contentType: String {
        switch self {
        case .consolePage, .appPage: "text/html; charset=utf-8"
        case .consoleScript, .consoleCore, .consoleSocket, .consoleMessages, .consolePeople, .consoleSend, .consoleInvites,
             .appScript, .appText, .appState, .appSocket, .appRender, .appPush, .appBackground, .backoff, .subscribeURL, .serviceWorker:
            "text/javascript; charset=utf-8"
        case .consoleStyle, .appStyle: "text/css; charset=utf-8"
        case .manifest: "application/manifest+json"
        case .iconSVG: "image/svg+xml"
        case .icon192, .icon512: "image/png"
        }
    }

    /// A strong validator of the bytes: the same build serves the same tag on every server.
    var etag: String { Self.etags[self] ?? "" }

    private static let etags: [WebAsset: String] = Dictionary(uniqueKeysWithValues: allCases.map { ($0, tag($0.bytes)) })

    /// FNV-1a (64 bit) in quotes: a cache validator that changes when the bytes do, not a
    /// security measure.
    private static func tag(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let hex = String(hash, radix: 16)
        return "\"" + String(repeating: "0", count: 16 - hex.count) + hex + "\""
    }

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
        // The worker lives at /app/sw.js but serves the page at /app (outside /app/).
        if self == .serviceWorker { r.headers.append((name: "service-worker-allowed", value: "/app")) }
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
