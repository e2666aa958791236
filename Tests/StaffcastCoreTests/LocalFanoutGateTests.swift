import StaffcastCore
import XCTest

final class LocalFanoutGateTests: XCTestCase {
    typealias Position = LocalFanoutGate.Position

    func commit(_ first: Int64, _ last: Int64, before: Int64, access: Int64 = 0, token: Int64 = 0) -> LocalFanoutGate.Commit {
        .init(firstSeq: first, lastSeq: last, messagesBefore: before, accessThrough: access, tokenThrough: token)
    }

    func testABatchRightAfterWhatWasHandedOnGoesAtOnceAndTheFeedSkipsIt() {
        var gate = LocalFanoutGate(start: Position(message: 10, access: 3, token: 2))
        XCTAssertEqual(gate.admit(commit(11, 14, before: 10, access: 3, token: 2)), .handOn)
        XCTAssertEqual(gate.posted.message, 14)
        // The feed reads 11…14 back: every one of them is at or below what it must skip.
        XCTAssertEqual(gate.feed(through: Position(message: 14, access: 3, token: 2)), 14)
        XCTAssertEqual(gate.posted, Position(message: 14, access: 3, token: 2))
    }

    func testGapsInSeqDoNotHoldABatchBack() {
        // Rolled-back inserts leave holes: what counts is the highest seq committed before it.
        var gate = LocalFanoutGate(start: Position(message: 10, access: 0, token: 0))
        XCTAssertEqual(gate.admit(commit(17, 17, before: 10)), .handOn)
    }

    func testAMessageCommittedBeforeButNotHandedOnMakesTheFeedBringIt() {
        // Another server's message 11 committed first; this server's feed has not read it.
        var gate = LocalFanoutGate(start: Position(message: 10, access: 0, token: 0))
        XCTAssertEqual(gate.admit(commit(12, 13, before: 11)), .feedBehind)
        XCTAssertEqual(gate.posted.message, 10, "nothing moved")
        // The feed hands on 11, 12 and 13 itself, skipping nothing.
        XCTAssertEqual(gate.feed(through: Position(message: 13, access: 0, token: 0)), 10)
        XCTAssertEqual(gate.posted.message, 13)
    }

    func testAnAccessChangeCommittedBeforeMustBeHandedOnFirst() {
        // A revoke (access seq 6) committed before the send: the feed must apply it first, or
        // the revoked user would get a message the revoke should hide.
        var gate = LocalFanoutGate(start: Position(message: 10, access: 5, token: 0))
        XCTAssertEqual(gate.admit(commit(11, 11, before: 10, access: 6)), .feedBehind)
        _ = gate.feed(through: Position(message: 10, access: 6, token: 0)) // the feed read only the logs its NOTIFY named
        XCTAssertEqual(gate.admit(commit(11, 11, before: 10, access: 6)), .handOn, "now in order")
    }

    func testATokenChangeCommittedBeforeMustBeHandedOnFirst() {
        var gate = LocalFanoutGate(start: Position(message: 10, access: 0, token: 4))
        XCTAssertEqual(gate.admit(commit(11, 11, before: 10, token: 5)), .feedBehind)
        _ = gate.feed(through: Position(message: 10, access: 0, token: 5))
        XCTAssertEqual(gate.admit(commit(11, 11, before: 10, token: 5)), .handOn)
    }

    func testABatchTheFeedHandedOnAlreadyIsNotHandedOnTwice() {
        var gate = LocalFanoutGate(start: Position(message: 10, access: 0, token: 0))
        XCTAssertEqual(gate.feed(through: Position(message: 12, access: 0, token: 0)), 10)
        XCTAssertEqual(gate.admit(commit(11, 12, before: 10)), .alreadyHandedOn)
        XCTAssertEqual(gate.posted.message, 12)
    }

    func testLaterChangesTheFeedAlreadyAppliedDoNotHoldABatchBack() {
        // Access changes that committed after the batch (seq above what it read) were handed on
        // by a read that named only the access log: the batch may still go.
        var gate = LocalFanoutGate(start: Position(message: 10, access: 0, token: 0))
        _ = gate.feed(through: Position(message: 10, access: 9, token: 3))
        XCTAssertEqual(gate.admit(commit(11, 11, before: 10, access: 7, token: 1)), .handOn)
    }

    func testBatchesOneAfterTheOtherAllGoFirst() {
        var gate = LocalFanoutGate(start: Position(message: 0, access: 0, token: 0))
        var last: Int64 = 0
        for n in 0..<100 {
            let first = last + 1 + Int64(n % 3) // holes now and then
            XCTAssertEqual(gate.admit(commit(first, first + 4, before: last)), .handOn)
            last = first + 4
        }
        XCTAssertEqual(gate.feed(through: Position(message: last, access: 0, token: 0)), last)
    }

    func testAskingWhatItWouldDecideMovesNothing() {
        var gate = LocalFanoutGate(start: Position(message: 10, access: 0, token: 0))
        XCTAssertEqual(gate.decision(for: commit(11, 12, before: 10)), .handOn)
        XCTAssertEqual(gate.posted.message, 10, "only admit moves on")
        XCTAssertEqual(gate.decision(for: commit(12, 12, before: 11)), .feedBehind)
        XCTAssertEqual(gate.admit(commit(11, 12, before: 10)), .handOn)
        XCTAssertEqual(gate.decision(for: commit(11, 12, before: 10)), .alreadyHandedOn)
    }

    func testTheFeedNeverMovesAPositionBack() {
        var gate = LocalFanoutGate(start: Position(message: 20, access: 8, token: 4))
        XCTAssertEqual(gate.feed(through: Position(message: 15, access: 2, token: 1)), 20)
        XCTAssertEqual(gate.posted, Position(message: 20, access: 8, token: 4))
    }
}
