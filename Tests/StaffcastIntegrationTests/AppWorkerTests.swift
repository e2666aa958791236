import Foundation
import XCTest

/// The staff app's service worker keeps one whole build of the app or none (docs/protocol.md,
/// The staff app, Offline): the server's own `/app/sw.js`, with the SHA-256 of every file of its
/// build, in headless Chromium (`scripts/app-worker-browser-test.py`), fetching from an origin the
/// script serves, which passes this server's files on or changes one of them, as a server of
/// another version mid-upgrade or a captive portal would. A first install that meets a wrong file
/// stores nothing; with the right files it keeps exactly the build; an update that meets a wrong
/// file leaves the old build whole and alone; the update served right replaces it.
final class AppWorkerTests: IntegrationTestCase {
    func testTheWorkerStoresOneWholeBuildOrNone() throws {
        try startServer()
        guard let browser = try BrowserScript.start("app-worker-browser-test.py", ["--url", server.http]) else { return }
        defer { browser.stop() }
        for marker in ["REFUSED", "STORED", "KEPT", "UPDATED"] {
            guard browser.reached(marker, timeout: 90) else { return }
        }
        browser.finish(within: 60)
    }
}
