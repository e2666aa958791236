import Foundation
import StaffcastCore

/// The routes for operators and organisers watching a server: the OpenAPI description,
/// health, readiness, metrics, status, an event's status and reach.
extension HTTPAPI {
    func ops(_ route: HTTPRoute, _ request: HTTPRequest, bearer token: String?, _ respond: @escaping Respond) {
        let head = request.head
        switch route {
        case .openAPI:
            respond(HTTPResponse(status: 200, contentType: "application/yaml; charset=utf-8", body: PackageResources.openapi_yaml))
        case .healthz:
            respond(.json(200, ["status": "ok", "node": configuration.nodeID]))
        case .readyz:
            let r = health.readiness
            respond(.json(r.ready ? 200 : 503, r))
        case .metrics:
            if configuration.metricsRequireToken, !isOpsToken(token) {
                respond(.error(StaffcastError(.unauthorized, "/metrics needs the ops token as a bearer token.")))
                return
            }
            loops.collect { [reports] loops in
                // Off the loop that completed the collection: the process metrics read /proc.
                DispatchQueue.global().async {
                    respond(.text(200, reports.metricsText(loops), contentType: "text/plain; version=0.0.4; charset=utf-8"))
                }
            }
        case .status:
            if isOpsToken(token) {
                opsStatus(respond)
                return
            }
            // (allowOpsToken: the refusal of a missing token names both kinds.)
            runOnWorker(token, allowOpsToken: true, respond) { [loops, reports, workers] store, identity, done in
                // An owner sees only their own events (the ops token, which sees every event, was
                // answered above without a worker).
                guard let identity else { throw StaffcastError.forbidden("Status is for owners of an event or the ops token.") }
                let owned = try store.ownedEvents(identity.userID)
                guard !owned.isEmpty else { throw StaffcastError.forbidden("Status is for owners of an event or the ops token.") }
                let latency = try store.ping()
                loops.collect { all in
                    let loops = all.map { $0.restricted(to: owned) }
                    // Back to a worker for the events' facts: never query on a loop's thread. Every
                    // event they own is listed, with nobody connected here too (it listed only
                    // those with a subscriber on this server; attack round).
                    let events = Array(owned)
                    let queued = workers.submit { session in
                        let facts = (try? session.store().eventFacts(events)) ?? []
                        done(.json(200, reports.statusSnapshot(loops, facts: facts, databaseLatency: latency, serverWide: false,
                                                               listing: owned)))
                    }
                    if !queued {
                        done(.json(200, reports.statusSnapshot(loops, facts: [], databaseLatency: latency, serverWide: false,
                                                               listing: owned)))
                    }
                }
            }
        case .eventStatus(let eventID):
            let node = configuration.nodeID
            guard let asked: RosterPage? = decoded(respond, try RosterPage.from(query: head.query)) else { return }
            if let page = asked {
                eventStatusPage(eventID, page, bearer: token, respond)
                return
            }
            runOnWorker(token, allowOpsToken: true, respond) { [loops, reports] store, identity, done in
                let roster = try store.roster(event: eventID, asUser: identity?.userID)
                let elsewhere = try store.presence(event: eventID, excludingNode: node)
                loops.collect { loops in
                    done(.json(200, reports.eventStatus(eventID, loops: loops, roster: roster, elsewhere: elsewhere)))
                }
            }
        case .reach(let eventID):
            let node = configuration.nodeID
            // reach?teams=a,b: the audience a message to those teams would have.
            let teams: [String]
            do {
                teams = try SendRequest(eventID: eventID, message: "-")
                    .withTeams((head.query["teams"] ?? "").split(separator: ",").map(String.init)).teams
            } catch {
                respond(.error(error))
                return
            }
            runAsUserThenLoops(token, respond) { [loops, reports] store, identity, done in
                let facts = try store.reachFacts(as: identity.userID, event: eventID, excludingNode: node, teams: teams)
                loops.collect { loops in done(.json(200, reports.reach(eventID, facts: facts, loops: loops))) }
            }
        default:
            respond(.error(.notFound("There is no such route.")))
        }
    }

    /// `GET /v1/events/{id}/status?limit=N`: the whole roster's names and who is connected
    /// (cheap), then, back on a worker, unread and last read of the page's people only (the
    /// unread counts of 10,000 people were most of the whole answer's seconds).
    private func eventStatusPage(_ eventID: UUID, _ page: RosterPage, bearer token: String?, _ respond: @escaping Respond) {
        let node = configuration.nodeID
        runOnWorker(token, allowOpsToken: true, respond) { [loops, reports, workers, logger] store, identity, done in
            let members = try store.rosterMembers(event: eventID, asUser: identity?.userID)
            let elsewhere = try store.presence(event: eventID, excludingNode: node)
            loops.collect { loops in
                let connections = StatusReports.Connections(eventID, loops: loops, elsewhere: elsewhere)
                let selection = reports.rosterSelection(page, members: members, connections: connections)
                // Never query on a loop's thread.
                let queued = workers.submit { session in
                    do {
                        let entries = try session.store().rosterEntries(event: eventID, users: selection.people.map(\.userID))
                        done(.json(200, reports.eventStatus(eventID, page: page, selection: selection, entries: entries,
                                                            connections: connections)))
                    } catch {
                        session.dropIfBroken()
                        done(.error(StaffcastError.from(error, logger: logger)))
                    }
                }
                if !queued {
                    done(.error(.unavailable("The server is overloaded right now; nothing was done. Try again in a moment.")))
                }
            }
        }
    }

    /// `/v1/status` for the ops token, which needs no database to be let in: during an outage
    /// (a stalled database holds every worker) it is when operators need it most, so it never
    /// waits on a worker for more than `factsDeadline` seconds; the events' names and rosters
    /// are left out then, and `database` says why.
    func opsStatus(_ respond: @escaping Respond, factsDeadline: Double = 2) {
        guard acceptsRequests(respond) else { return }
        let latency = health.databaseLatency
        let databaseUp = health.readiness.database == "up"
        loops.collect { [reports, workers] loops in
            let answer = OnceResponder(respond)
            let events = Array(Set(loops.flatMap { $0.subscribers.keys }))
            // With the database down, no job that would wait on it: each poll would leave one.
            let queued = databaseUp && workers.submit { session in
                let facts = (try? session.store().eventFacts(events)) ?? []
                answer.respond(.json(200, reports.statusSnapshot(loops, facts: facts, databaseLatency: latency)))
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + (queued ? factsDeadline : 0)) {
                answer.respond(.json(200, reports.statusSnapshot(loops, facts: [], databaseLatency: latency)))
            }
        }
    }
}
