import Foundation
import StaffcastClient
import StaffcastCore
import StaffcastPostgres
import StaffcastServer
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Several service loops deliver every message once and in order, and stopping during a fan-out
/// burst returns and closes every subscriber.
final class ServiceLoopTransportTests: TransportTestCase {
    // MARK: 7. several service loops

    func testSeveralServiceLoopsDeliverEveryMessageOnceInOrder() throws {
        let server = try startServer {
            $0.serviceThreads = 2
            $0.maxConnectionsPerUser = 100
            $0.sendBurst = 100
            $0.sendRatePerSecond = 100
        }
        var subscribers: [TestSocket] = []
        for _ in 0..<60 {
            let s = try server.subscriber(fixture.staffToken, fixture.event)
            subscribers.append(s)
        }
        let owner = try server.connect(fixture.ownerToken)
        var sentSeqs: [Int64] = []
        for i in 0..<30 {
            try owner.send(["op": "send", "event_id": eventID, "message": "loops \(i)", "ref": "s\(i)"])
            sentSeqs.append(try XCTUnwrap(try owner.expect("sent").message).seq)
        }
        // A last message marks the end: what a subscriber got before it is all it got.
        let sentinel = "loops: the end"
        try owner.send(["op": "send", "event_id": eventID, "message": sentinel, "ref": "end"])
        _ = try owner.expect("sent")

        let object = try status(server)
        XCTAssertEqual(object["connections"] as? Int, 61)
        if let loops = object["loops"] as? [[String: Any]] {
            let busy = loops.filter { ($0["connections"] as? Int ?? 0) > 0 }
            XCTAssertGreaterThanOrEqual(busy.count, 2, "connections are spread over the loops: \(loops)")
        } else {
            print("note: /v1/status has no `loops` breakdown; the spread over loops was not checked")
        }

        let deadline = Date().addingTimeInterval(30)
        for (i, s) in subscribers.enumerated() {
            let (got, ended) = try s.seqs(until: sentinel, deadline: deadline)
            XCTAssertTrue(ended, "subscriber \(i) did not get the last message")
            XCTAssertEqual(got, sentSeqs, "subscriber \(i): every message exactly once, in seq order")
        }
    }

    // MARK: 8. stopping during a fan-out burst

    func testStopDuringAFanOutBurstReturnsAndClosesEverySubscriber() throws {
        let subscriberCount = 50
        let server = try startServer {
            $0.maxConnectionsPerUser = 100
            $0.heartbeatInterval = 300
            // Only the stop may end these connections, not the slow-client limits.
            $0.outboundMaxFrames = 1_000_000
            $0.outboundMaxBytes = 1 << 30
            $0.writeStallTimeout = 120
        }
        var subscribers: [TestSocket] = []
        for _ in 0..<subscriberCount {
            let s = try server.subscriber(fixture.staffToken, fixture.event)
            subscribers.append(s)
        }

        enum End: Equatable, CustomStringConvertible {
            case close(UInt16, String), eof, failed(String), stillOpen
            var description: String {
                switch self {
                case .close(let code, let reason): return "close \(code) \(reason)"
                case .eof: return "EOF"
                case .failed(let why): return "failed: \(why)"
                case .stillOpen: return "still open"
                }
            }
        }
        let ends = Guarded<[Int: End]>([:])
        let frames = Guarded(0)
        let readers = DispatchGroup()
        for (i, s) in subscribers.enumerated() {
            let client = Unchecked(s.client)
            readers.enter()
            Thread {
                var end = End.stillOpen
                let until = Date().addingTimeInterval(60)
                reading: while Date() < until {
                    do {
                        switch try client.value.receive(timeout: 1) {
                        case .text?: frames.update { $0 += 1 }
                        case .close(let code, let reason)?:
                            end = .close(code, reason)
                            break reading
                        case .binary?, nil: continue
                        }
                    } catch ClientError.closed(_, let reason) where reason == "connection dropped" {
                        end = .eof
                        break reading
                    } catch {
                        end = .failed("\(error)")
                        break reading
                    }
                }
                ends.update { $0[i] = end }
                readers.leave()
            }.start()
        }

        // The publisher: commits as fast as one database connection can, until told to stop.
        let (conninfo, owner, event) = (fixture.conninfo, fixture.owner, fixture.event)
        let stopPublishing = Guarded(false)
        let published = Guarded(0)
        let publisherDone = DispatchSemaphore(value: 0)
        Thread {
            if let store = try? Store(PGConnection(conninfo: conninfo)) {
                var i = 0
                while !stopPublishing.value {
                    if let request = try? SendRequest(eventID: event, message: "burst \(i)"),
                       (try? store.send(as: owner, request)) != nil {
                        published.update { $0 += 1 }
                    }
                    i += 1
                }
            }
            publisherDone.signal()
        }.start()

        // Stop once the burst is flowing to the subscribers.
        waitUntil(10, poll: 0.02) { frames.value >= subscriberCount * 50 }
        XCTAssertGreaterThan(frames.value, 0, "the burst never reached the subscribers (\(published.value) published)")

        let framesBeforeStop = frames.value
        let stopped = DispatchSemaphore(value: 0)
        let core = server.server
        Thread { core.stop(); stopped.signal() }.start()
        XCTAssertEqual(stopped.wait(timeout: .now() + 10), .success, "stop() did not return within 10 s")
        stopPublishing.update { $0 = true }

        XCTAssertEqual(readers.wait(timeout: .now() + 15), .success, "some subscribers never saw their connection end")
        let byEnd = ends.value
        let closes = byEnd.values.filter { if case .close(1001, _) = $0 { return true } else { return false } }.count
        let eofs = byEnd.values.filter { $0 == .eof }.count
        print("note: stopped after \(framesBeforeStop) frames reached the subscribers (\(published.value) messages "
              + "committed in all); \(closes) ended with 1001, \(eofs) with EOF")
        for i in 0..<subscriberCount {
            let end = byEnd[i] ?? .stillOpen
            switch end {
            case .close(1001, _), .eof: break
            default: XCTFail("subscriber \(i) ended with \(end), not 1001 or EOF")
            }
        }
        XCTAssertThrowsError(try WebSocketClient(url: server.ws, headers: ["Authorization": "Bearer \(fixture.staffToken)"]),
                             "a stopped server accepts no connection")
        _ = publisherDone.wait(timeout: .now() + 10)
    }
}
