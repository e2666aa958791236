import StaffcastPostgres

/// `GET /v1/events/{id}/audit` as JSON: the newest `limit` entries, and whether older ones
/// were left out (`more`), so that a cut log is never taken for the whole of it.
struct AuditBody: Encodable {
    var entries: [Store.AuditEntry]
    var more: Bool
}
