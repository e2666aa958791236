import Foundation
import StaffcastCore

/// The HTTP API of docs/protocol.md, HTTP API, matched from a method and a path. Pure.
enum HTTPRoute: Equatable {
    case sendMessage(eventID: UUID)
    case listMessages(eventID: UUID)
    case listScheduled(eventID: UUID)
    case cancelScheduled(id: UUID)
    case editMessage(messageID: UUID)
    case replies(messageID: UUID)
    case createTemplate(eventID: UUID)
    case listTemplates(eventID: UUID)
    case deleteTemplate(eventID: UUID, name: String)
    case retractMessage(messageID: UUID)
    /// Teams and zones (docs/protocol.md, Audiences): HTTPAPI+Teams.
    case createTeam(eventID: UUID)
    case listTeams(eventID: UUID)
    case deleteTeam(eventID: UUID, name: String)
    case teamMembers(eventID: UUID, name: String)
    /// PUT adds, DELETE removes.
    case teamMember(eventID: UUID, name: String, userID: UUID)
    case zoneCheckin(eventID: UUID, name: String)
    /// POST answers a poll, GET reports its answers (HTTPAPI+Teams).
    case answers(messageID: UUID)
    /// The event's audit log (admins and owners), JSON or CSV.
    case audit(eventID: UUID)
    case receipts(messageID: UUID)
    case notify(userID: UUID)
    case eventStatus(eventID: UUID)
    case reach(eventID: UUID)
    case myNotifications
    case myEvents
    case createInvite(eventID: UUID)
    case revokeInvite(code: String)
    case redeemInvite(code: String)
    /// The organiser's web console (`GET /console`, its script and style), the staff app
    /// (`GET /app` and its files) and the page a join URL opens (`GET /join/{code}`: the app).
    case web(WebAsset)
    /// GET lists, DELETE revokes all (HTTPAPI+Tokens).
    case userTokens(userID: UUID)
    /// DELETE revokes one.
    case userToken(userID: UUID, tokenID: UUID)
    /// Web Push and webhooks (HTTPAPI+Reach).
    case pushKey
    case addPushSubscription
    /// The caller's sign-in's push subscriptions (does push still reach this device?).
    case pushSubscriptions
    case deletePushSubscription(id: UUID)
    case webhooks(eventID: UUID)
    case deleteWebhook(eventID: UUID, webhookID: UUID)
    case webhookDeliveries(eventID: UUID, webhookID: UUID)
    /// `GET /v1/openapi.yaml`: docs/openapi.yaml, compiled in.
    case openAPI
    case healthz
    case readyz
    case metrics
    case status

    enum Failure: Error, Equatable {
        case notFound
        case methodNotAllowed(allowed: String)
        case badID(String)
    }

    /// The routes at `/v1/{collection}/{id}/{what}` that take one method, by `[collection,
    /// what]`: the method and the route of the id.
    private static let oneMethod: [[String]: (method: String, route: @Sendable (UUID) -> HTTPRoute)] = [
        ["events", "invites"]: ("POST", { .createInvite(eventID: $0) }),
        ["events", "audit"]: ("GET", { .audit(eventID: $0) }),
        ["events", "scheduled"]: ("GET", { .listScheduled(eventID: $0) }),
        ["events", "status"]: ("GET", { .eventStatus(eventID: $0) }),
        ["events", "reach"]: ("GET", { .reach(eventID: $0) }),
        ["messages", "replies"]: ("GET", { .replies(messageID: $0) }),
        ["messages", "receipts"]: ("GET", { .receipts(messageID: $0) }),
        ["users", "notifications"]: ("POST", { .notify(userID: $0) }),
    ]

    static func match(method: String, path: String) -> Result<HTTPRoute, Failure> {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        func id(_ s: String) -> Result<UUID, Failure> {
            UUID(wireText: s).map(Result.success) ?? .failure(.badID(s))
        }
        func only(_ allowed: String, _ route: () -> Result<HTTPRoute, Failure>) -> Result<HTTPRoute, Failure> {
            method == allowed || (allowed == "GET" && method == "HEAD") ? route() : .failure(.methodNotAllowed(allowed: allowed))
        }
        /// A name in a path (a template, team or zone) as the client percent-encoded it.
        func pathName(_ segment: String) -> String { segment.removingPercentEncoding ?? segment }
        /// A collection at `/v1/{kind}/{id}/{what}` that GET (or HEAD) reads and POST adds to.
        func getOrPost(get: (UUID) -> HTTPRoute, post: (UUID) -> HTTPRoute) -> Result<HTTPRoute, Failure> {
            switch method {
            case "POST": return id(parts[2]).map(post)
            case "GET", "HEAD": return id(parts[2]).map(get)
            default: return .failure(.methodNotAllowed(allowed: "GET, POST"))
            }
        }
        if parts.count == 4, parts[0] == "v1", let one = oneMethod[[parts[1], parts[3]]] {
            return only(one.method) { id(parts[2]).map(one.route) }
        }
        switch parts.count {
        case 1:
            switch parts[0] {
            case "healthz": return only("GET") { .success(.healthz) }
            case "readyz": return only("GET") { .success(.readyz) }
            case "metrics": return only("GET") { .success(.metrics) }
            case "console": return only("GET") { .success(.web(.consolePage)) }
            case "app": return only("GET") { .success(.web(.appPage)) }
            default: return .failure(.notFound)
            }
        case 2 where parts[0] == "console":
            guard let asset = WebAsset(consoleFile: parts[1]) else { return .failure(.notFound) }
            return only("GET") { .success(.web(asset)) }
        case 2 where parts[0] == "app":
            guard let asset = WebAsset(appFile: parts[1]) else { return .failure(.notFound) }
            return only("GET") { .success(.web(asset)) }
        case 2 where parts[0] == "join":
            return only("GET") { .success(.web(.appPage)) }
        case 3 where parts[0] == "checkin":
            // The link printed as a QR code at a zone's post: the staff app checks in from it.
            return only("GET") { .success(.web(.appPage)) }
        case 3 where parts[0] == "v1" && parts[1] == "invites":
            return only("DELETE") { .success(.revokeInvite(code: parts[2])) }
        case 4 where parts[0] == "v1" && parts[1] == "invites" && parts[3] == "redeem":
            return only("POST") { .success(.redeemInvite(code: parts[2])) }
        case 3 where parts == ["v1", "push", "key"]:
            return only("GET") { .success(.pushKey) }
        case 3 where parts == ["v1", "push", "subscriptions"]:
            switch method {
            case "POST": return .success(.addPushSubscription)
            case "GET", "HEAD": return .success(.pushSubscriptions)
            default: return .failure(.methodNotAllowed(allowed: "GET, POST"))
            }
        case 4 where parts[0] == "v1" && parts[1] == "push" && parts[2] == "subscriptions":
            return only("DELETE") { id(parts[3]).map { .deletePushSubscription(id: $0) } }
        case 4 where parts[0] == "v1" && parts[1] == "events" && parts[3] == "webhooks":
            return getOrPost(get: Self.webhooks(eventID:), post: Self.webhooks(eventID:))
        case 5 where parts[0] == "v1" && parts[1] == "events" && parts[3] == "webhooks":
            return only("DELETE") { id(parts[2]).flatMap { e in id(parts[4]).map { .deleteWebhook(eventID: e, webhookID: $0) } } }
        case 6 where parts[0] == "v1" && parts[1] == "events" && parts[3] == "webhooks" && parts[5] == "deliveries":
            return only("GET") { id(parts[2]).flatMap { e in id(parts[4]).map { .webhookDeliveries(eventID: e, webhookID: $0) } } }
        case 2 where parts == ["v1", "openapi.yaml"]:
            return only("GET") { .success(.openAPI) }
        case 2 where parts == ["v1", "status"]:
            return only("GET") { .success(.status) }
        case 3 where parts == ["v1", "me", "notifications"]:
            return only("GET") { .success(.myNotifications) }
        case 3 where parts == ["v1", "me", "events"]:
            return only("GET") { .success(.myEvents) }
        case 4 where parts[0] == "v1" && parts[1] == "events" && parts[3] == "messages":
            return getOrPost(get: Self.listMessages(eventID:), post: Self.sendMessage(eventID:))
        case 4 where parts[0] == "v1" && parts[1] == "events" && parts[3] == "templates":
            return getOrPost(get: Self.listTemplates(eventID:), post: Self.createTemplate(eventID:))
        case 5 where parts[0] == "v1" && parts[1] == "events" && parts[3] == "templates":
            let name = pathName(parts[4])
            return only("DELETE") { id(parts[2]).map { .deleteTemplate(eventID: $0, name: name) } }
        case 4 where parts[0] == "v1" && parts[1] == "events" && parts[3] == "teams":
            return getOrPost(get: Self.listTeams(eventID:), post: Self.createTeam(eventID:))
        case 5 where parts[0] == "v1" && parts[1] == "events" && parts[3] == "teams":
            let name = pathName(parts[4])
            return only("DELETE") { id(parts[2]).map { .deleteTeam(eventID: $0, name: name) } }
        case 6 where parts[0] == "v1" && parts[1] == "events" && parts[3] == "teams" && parts[5] == "members":
            let name = pathName(parts[4])
            return only("GET") { id(parts[2]).map { .teamMembers(eventID: $0, name: name) } }
        case 7 where parts[0] == "v1" && parts[1] == "events" && parts[3] == "teams" && parts[5] == "members":
            let name = pathName(parts[4])
            guard method == "PUT" || method == "DELETE" else { return .failure(.methodNotAllowed(allowed: "PUT, DELETE")) }
            return id(parts[2]).flatMap { event in id(parts[6]).map { .teamMember(eventID: event, name: name, userID: $0) } }
        case 6 where parts[0] == "v1" && parts[1] == "events" && parts[3] == "zones" && parts[5] == "checkin":
            let name = pathName(parts[4])
            return only("POST") { id(parts[2]).map { .zoneCheckin(eventID: $0, name: name) } }
        case 3 where parts[0] == "v1" && parts[1] == "messages":
            switch method {
            case "PATCH": return id(parts[2]).map { .editMessage(messageID: $0) }
            case "DELETE": return id(parts[2]).map { .retractMessage(messageID: $0) }
            default: return .failure(.methodNotAllowed(allowed: "PATCH, DELETE"))
            }
        case 3 where parts[0] == "v1" && parts[1] == "scheduled":
            return only("DELETE") { id(parts[2]).map { .cancelScheduled(id: $0) } }
        case 4 where parts[0] == "v1" && parts[1] == "messages" && parts[3] == "answers":
            return getOrPost(get: Self.answers(messageID:), post: Self.answers(messageID:))
        case 4 where parts[0] == "v1" && parts[1] == "users" && parts[3] == "tokens":
            switch method {
            case "GET", "HEAD", "DELETE": return id(parts[2]).map { .userTokens(userID: $0) }
            default: return .failure(.methodNotAllowed(allowed: "GET, DELETE"))
            }
        case 5 where parts[0] == "v1" && parts[1] == "users" && parts[3] == "tokens":
            guard method == "DELETE" else { return .failure(.methodNotAllowed(allowed: "DELETE")) }
            return id(parts[2]).flatMap { user in id(parts[4]).map { .userToken(userID: user, tokenID: $0) } }
        default:
            return .failure(.notFound)
        }
    }

    /// Route label for logs and metrics (bounded: no ids).
    var label: String {
        switch self {
        case .sendMessage: return "POST /v1/events/{id}/messages"
        case .listMessages: return "GET /v1/events/{id}/messages"
        case .receipts: return "GET /v1/messages/{id}/receipts"
        case .listScheduled: return "GET /v1/events/{id}/scheduled"
        case .cancelScheduled: return "DELETE /v1/scheduled/{id}"
        case .editMessage: return "PATCH /v1/messages/{id}"
        case .replies: return "GET /v1/messages/{id}/replies"
        case .createTemplate: return "POST /v1/events/{id}/templates"
        case .listTemplates: return "GET /v1/events/{id}/templates"
        case .deleteTemplate: return "DELETE /v1/events/{id}/templates/{name}"
        case .retractMessage: return "DELETE /v1/messages/{id}"
        case .createTeam: return "POST /v1/events/{id}/teams"
        case .listTeams: return "GET /v1/events/{id}/teams"
        case .deleteTeam: return "DELETE /v1/events/{id}/teams/{name}"
        case .teamMembers: return "GET /v1/events/{id}/teams/{name}/members"
        case .teamMember: return "PUT|DELETE /v1/events/{id}/teams/{name}/members/{id}"
        case .zoneCheckin: return "POST /v1/events/{id}/zones/{name}/checkin"
        case .answers: return "GET|POST /v1/messages/{id}/answers"
        case .audit: return "GET /v1/events/{id}/audit"
        case .notify: return "POST /v1/users/{id}/notifications"
        case .eventStatus: return "GET /v1/events/{id}/status"
        case .reach: return "GET /v1/events/{id}/reach"
        case .myNotifications: return "GET /v1/me/notifications"
        case .myEvents: return "GET /v1/me/events"
        case .userTokens: return "GET|DELETE /v1/users/{id}/tokens"
        case .userToken: return "DELETE /v1/users/{id}/tokens/{id}"
        case .pushKey: return "GET /v1/push/key"
        case .addPushSubscription: return "POST /v1/push/subscriptions"
        case .pushSubscriptions: return "GET /v1/push/subscriptions"
        case .deletePushSubscription: return "DELETE /v1/push/subscriptions/{id}"
        case .webhooks: return "GET|POST /v1/events/{id}/webhooks"
        case .deleteWebhook: return "DELETE /v1/events/{id}/webhooks/{id}"
        case .webhookDeliveries: return "GET /v1/events/{id}/webhooks/{id}/deliveries"
        case .openAPI: return "GET /v1/openapi.yaml"
        case .healthz: return "GET /healthz"
        case .readyz: return "GET /readyz"
        case .metrics: return "GET /metrics"
        case .status: return "GET /v1/status"
        case .createInvite: return "POST /v1/events/{id}/invites"
        case .revokeInvite: return "DELETE /v1/invites/{code}"
        case .redeemInvite: return "POST /v1/invites/{code}/redeem"
        case .web(let asset): return asset.isConsole ? "GET /console" : "GET /app"
        }
    }
}
