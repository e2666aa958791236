@testable import StaffcastCore
import XCTest

final class ReadinessRuleTests: XCTestCase {
    let rule = ReadinessRule(probeInterval: 1, probeDeadline: 2, listenerPollInterval: 0.5)

    func judge(_ now: Double, state: String = "running", probe: Double?, listener: String = "listening", read: Double?) -> Readiness {
        rule.judge(now: now, state: state, lastProbe: probe, listenerState: listener, lastRead: read)
    }

    func testReadyOnlyWhileBothAreRecent() {
        XCTAssertEqual(judge(100, probe: 99.5, read: 99.9), Readiness(ready: true, database: "up", listener: "listening", state: "running"))
        XCTAssertEqual(judge(100, probe: 100 - rule.databaseStaleAfter, read: 99.9).ready, true, "exactly at the limit")
        XCTAssertEqual(judge(100, probe: 100 - rule.databaseStaleAfter - 0.01, read: 99.9),
                       Readiness(ready: false, database: "down", listener: "listening", state: "running"))
        XCTAssertEqual(judge(100, probe: 99.9, read: 100 - rule.listenerStaleAfter - 0.01),
                       Readiness(ready: false, database: "up", listener: "behind", state: "running"))
        XCTAssertEqual(judge(100, probe: nil, read: 99.9).database, "down", "no round trip yet")
        XCTAssertEqual(judge(100, probe: 99.9, read: nil).listener, "behind", "no read yet")
    }

    func testListenerStatesOtherThanListeningAreNotReady() {
        for state in ["starting", "reconnecting", "stopped"] {
            XCTAssertEqual(judge(100, probe: 99.9, listener: state, read: 99.9),
                           Readiness(ready: false, database: "up", listener: state, state: "running"))
        }
    }

    func testADrainingServerIsNotReady() {
        XCTAssertEqual(judge(100, state: "draining", probe: 99.9, read: 99.9),
                       Readiness(ready: false, database: "up", listener: "listening", state: "draining"))
    }

    func testStaleLimitsFollowTheSettings() {
        XCTAssertEqual(rule.databaseStaleAfter, 3.5)
        XCTAssertEqual(rule.listenerStaleAfter, 3.5)
        XCTAssertEqual(ReadinessRule(probeInterval: 1, probeDeadline: 2, listenerPollInterval: 2).listenerStaleAfter, 5)
    }
}
