import Foundation
import Logging
import StaffcastCore
@testable import StaffcastPostgres
import XCTest

/// Tokens as servers keep them in memory (docs/protocol.md): loaded from one snapshot, followed
/// through the token change log, expiring, revoked per user or one at a time, and the
/// `staffcast admin token` commands.
final class TokenTests: IntegrationTestCase {
    var store: Store { fixture.store }

    func digest(_ token: String) -> TokenDigest { TokenHasher.digest(of: token) }

    func expire(_ token: String) throws {
        try store.conn.query("UPDATE api_tokens SET expires_at = now() - interval '1 second' WHERE token_hash = $1",
                             [TokenHasher.storedHash(of: token)])
    }

    // MARK: store

    func testDigestIsTheStoredHash() throws {
        let token = try store.issueToken(user: fixture.staff)
        let d = digest(token)
        XCTAssertEqual("\\x" + d.hex, TokenHasher.storedHash(of: token))
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM api_tokens WHERE encode(token_hash, 'hex') = $1", [d.hex]), 1)
    }

    func testValidTokensLoadsIssuedTokensButNotRevokedOrExpiredOnes() throws {
        let later = try store.issueToken(user: fixture.staff, label: "tablet", expiresIn: 3_600)
        let revoked = try store.issueToken(user: fixture.staff)
        let expired = try store.issueToken(user: fixture.admin)
        XCTAssertNotNil(try store.revokeToken(revoked))
        try expire(expired)

        let (tokens, through) = try store.validTokens()
        let byDigest = Dictionary(uniqueKeysWithValues: tokens.map { ($0.digest, $0) })
        XCTAssertEqual(tokens.count, 5, "the fixture's four tokens and `later`")
        for (token, user) in [(fixture.ownerToken, fixture.owner), (fixture.adminToken, fixture.admin),
                              (fixture.staffToken, fixture.staff), (fixture.outsiderToken, fixture.outsider)] {
            XCTAssertEqual(byDigest[digest(token)]?.identity.userID, user)
            XCTAssertNil(byDigest[digest(token)]?.expiresAt)
        }
        XCTAssertEqual(byDigest[digest(fixture.staffToken)]?.identity.displayName, "Sam Staff")
        let expiring = try XCTUnwrap(byDigest[digest(later)])
        XCTAssertEqual(expiring.identity, Identity(userID: fixture.staff, displayName: "Sam Staff"))
        XCTAssertEqual(try XCTUnwrap(expiring.expiresAt).timeIntervalSinceNow, 3_600, accuracy: 60)
        XCTAssertNil(byDigest[digest(revoked)])
        XCTAssertNil(byDigest[digest(expired)])

        // `through` is where the log ends, and where the change feed starts.
        XCTAssertEqual(through, Int64(try fixture.count("SELECT max(seq) FROM token_changes")))
        XCTAssertEqual(through, try store.currentCursors().token)
        XCTAssertTrue(try store.changes(after: ChangeCursors(token: through)).tokens.isEmpty)
    }

    func testChangesReportIssueRevokeExpiryAndDeleteInOrder() throws {
        let start = try store.currentCursors()
        XCTAssertGreaterThan(start.token, 0, "the fixture's issues are in the log")

        let token = try store.issueToken(user: fixture.staff, label: "scanner")
        var batch = try store.changes(after: start)
        XCTAssertFalse(batch.isEmpty)
        XCTAssertFalse(batch.hasMore)
        XCTAssertEqual(batch.tokens.count, 1)
        let issued = try XCTUnwrap(batch.tokens.first)
        XCTAssertEqual(issued.digest, digest(token))
        XCTAssertEqual(issued.userID, fixture.staff)
        XCTAssertEqual(issued.identity, Identity(userID: fixture.staff, displayName: "Sam Staff"))
        XCTAssertNil(issued.expiresAt)
        XCTAssertEqual(batch.cursors.token, issued.seq)
        XCTAssertGreaterThan(issued.seq, start.token)
        XCTAssertEqual(batch.cursors.message, start.message)
        XCTAssertEqual(batch.cursors.access, start.access)
        var cursors = batch.cursors

        XCTAssertEqual(try store.revokeToken(token), fixture.staff)
        batch = try store.changes(after: cursors)
        XCTAssertEqual(batch.tokens.count, 1)
        let revoked = try XCTUnwrap(batch.tokens.first)
        XCTAssertEqual(revoked.digest, digest(token))
        XCTAssertEqual(revoked.userID, fixture.staff)
        XCTAssertNil(revoked.identity, "a revoked token is no longer valid")
        XCTAssertGreaterThan(revoked.seq, issued.seq)
        XCTAssertEqual(batch.cursors.token, revoked.seq)
        cursors = batch.cursors
        XCTAssertTrue(try store.changes(after: cursors).isEmpty, "nothing twice")

        // Revoking again changes nothing and logs nothing; updating last_used_at logs nothing.
        XCTAssertNil(try store.revokeToken(token))
        try store.recordTokenUse([digest(fixture.staffToken)])
        XCTAssertTrue(try store.changes(after: cursors).isEmpty)

        // An expiry set later, and an expiry that passed, are reported too.
        try store.conn.query("UPDATE api_tokens SET expires_at = now() + interval '1 hour' WHERE token_hash = $1",
                             [TokenHasher.storedHash(of: fixture.adminToken)])
        try expire(fixture.outsiderToken)
        // A user deleted with their tokens.
        try store.conn.query("DELETE FROM profiles WHERE id = $1", [fixture.outsider.uuidString])
        batch = try store.changes(after: cursors)
        XCTAssertEqual(batch.tokens.map(\.digest), [digest(fixture.adminToken), digest(fixture.outsiderToken), digest(fixture.outsiderToken)])
        XCTAssertEqual(batch.tokens.map(\.seq), batch.tokens.map(\.seq).sorted())
        XCTAssertEqual(batch.tokens[0].identity?.userID, fixture.admin)
        XCTAssertNotNil(batch.tokens[0].expiresAt)
        XCTAssertNil(batch.tokens[1].identity)
        XCTAssertNil(batch.tokens[2].identity)
        XCTAssertEqual(batch.tokens[2].userID, fixture.outsider)
    }

    func testBatchesAreLimitedAndSayWhenThereIsMore() throws {
        let start = try store.currentCursors()
        for _ in 0..<3 { _ = try store.issueToken(user: fixture.staff) }
        let first = try store.changes(after: start, limit: 2)
        XCTAssertEqual(first.tokens.count, 2)
        XCTAssertTrue(first.hasMore)
        let second = try store.changes(after: first.cursors, limit: 2)
        XCTAssertEqual(second.tokens.count, 1)
        XCTAssertFalse(second.hasMore)
        XCTAssertEqual(Set((first.tokens + second.tokens).map(\.seq)).count, 3)
    }

    func testLoadingThenFollowingMissesNothingWhileTokensAreIssued() throws {
        // Issue tokens on another connection while loading; every one of them ends up in the
        // table exactly once, from the load or from the feed.
        let conninfo = fixture.conninfo, user = fixture.staff
        let issued = Locked<[String]>([])
        let done = DispatchSemaphore(value: 0)
        Thread {
            if let writer = try? Store(PGConnection(conninfo: conninfo)) {
                for _ in 0..<40 {
                    if let t = try? writer.issueToken(user: user) { issued.withLock { $0.append(t) } }
                }
            }
            done.signal()
        }.start()
        var table: Set<TokenDigest> = []
        var loads = 0
        var cursors = ChangeCursors()
        // The writer's one signal is taken once: by the check after a load, or by the wait
        // below (taking it in the loop and waiting again hung the test when the writer was fast).
        var written = false
        repeat {
            let (tokens, through) = try store.validTokens()
            table = Set(tokens.map(\.digest))
            cursors.token = through
            loads += 1
            written = done.wait(timeout: .now()) == .success
        } while !written && loads < 5
        if !written { XCTAssertEqual(done.wait(timeout: .now() + 60), .success, "the writer did not finish") }
        while true {
            let batch = try store.changes(after: cursors)
            for change in batch.tokens {
                if change.identity != nil { table.insert(change.digest) } else { table.remove(change.digest) }
            }
            cursors = batch.cursors
            if !batch.hasMore { break }
        }
        let all = issued.withLock { $0 }
        XCTAssertEqual(all.count, 40)
        for t in all { XCTAssertTrue(table.contains(digest(t))) }
        XCTAssertEqual(table.count, 44)
    }

    func testTheListenerIsWokenByATokenChange() throws {
        let batches = Locked<[ChangeBatch]>([])
        let listener = ChangeListener(conninfo: fixture.conninfo, from: try store.currentCursors(), pollInterval: 60,
                                      logger: TestDatabase.logger) { batch in batches.withLock { $0.append(batch) } }
        listener.start()
        defer { listener.stop() }
        waitUntil(10, poll: 0.02) { listener.state == .listening }
        XCTAssertEqual(listener.state, .listening)

        func waitForToken(_ token: String, valid: Bool) -> TimeInterval? {
            let started = Date()
            let seen = waitUntil(2, poll: 0.01) {
                batches.withLock { $0.flatMap(\.tokens) }.contains { $0.digest == digest(token) && ($0.identity != nil) == valid }
            }
            return seen ? Date().timeIntervalSince(started) : nil
        }
        let token = try store.issueToken(user: fixture.staff)
        XCTAssertNotNil(waitForToken(token, valid: true), "a new token reaches the listener within 2 s")
        try store.revokeTokens(user: fixture.staff)
        XCTAssertNotNil(waitForToken(token, valid: false), "a revoke reaches the listener within 2 s")
    }

    func testExpiredTokenIsRefused() throws {
        let token = try store.issueToken(user: fixture.staff, expiresIn: 3_600)
        XCTAssertEqual(try store.authenticate(token: token)?.userID, fixture.staff)
        try expire(token)
        XCTAssertNil(try store.authenticate(token: token))
        XCTAssertNil(try store.validTokens().tokens.first { $0.digest == digest(token) })
        XCTAssertEqual(try store.tokens(ofUser: fixture.staff).map(\.state), [.active, .expired])
        XCTAssertThrowsError(try store.issueToken(user: fixture.staff, expiresIn: 0)) { error in
            XCTAssertEqual((error as? StaffcastError)?.code, .invalid)
        }
        XCTAssertThrowsError(try store.issueToken(user: fixture.staff, expiresIn: -5))
    }

    func testRevokeAllOfAUserOrOneAndBothAreAudited() throws {
        let second = try store.issueToken(user: fixture.staff, label: "spare")
        XCTAssertEqual(try store.revokeTokens(user: fixture.staff, actor: "alice"), 2)
        XCTAssertNil(try store.authenticate(token: fixture.staffToken))
        XCTAssertNil(try store.authenticate(token: second))
        XCTAssertEqual(try store.revokeTokens(user: fixture.staff), 0, "already revoked")
        XCTAssertEqual(try store.tokens(ofUser: fixture.staff).map(\.state), [.revoked, .revoked])

        XCTAssertEqual(try store.revokeToken(fixture.adminToken, actor: "bob"), fixture.admin)
        XCTAssertNil(try store.authenticate(token: fixture.adminToken))
        XCTAssertEqual(try store.authenticate(token: fixture.ownerToken)?.userID, fixture.owner, "others keep working")
        XCTAssertNil(try store.revokeToken(TokenHasher.generate()), "an unknown token")
        XCTAssertThrowsError(try store.revokeToken("not-a-token")) { error in
            XCTAssertEqual((error as? StaffcastError)?.code, .invalid)
        }
        XCTAssertThrowsError(try store.revokeTokens(user: UUID())) { error in
            XCTAssertEqual((error as? StaffcastError)?.code, .notFound)
        }

        let log = try store.auditLog(limit: 2)
        XCTAssertEqual(log.map(\.action), ["token_revoke", "token_revoke"])
        XCTAssertEqual(log.map(\.actor), ["bob", "alice"])
        XCTAssertEqual(log.map(\.userID), [fixture.admin, fixture.staff].map { $0.uuidString.lowercased() })
        XCTAssertEqual(try fixture.count("SELECT count(*) FROM audit_log WHERE action = 'token_revoke'"), 2)
        for entry in log { XCTAssertFalse(entry.detail?.contains("sc_") ?? false) }
    }

    func testListShowsWhatATokenIsButNeverTheToken() throws {
        _ = try store.issueToken(user: fixture.staff, label: "gate 3", expiresIn: 86_400)
        try store.recordTokenUse([digest(fixture.staffToken)])
        let list = try store.tokens(ofUser: fixture.staff)
        XCTAssertEqual(list.count, 2)
        XCTAssertEqual(list.map(\.label), [nil, "gate 3"])
        XCTAssertNotNil(list[0].lastUsedAt)
        XCTAssertNil(list[1].lastUsedAt)
        XCTAssertNil(list[0].expiresAt)
        XCTAssertNotNil(list[1].expiresAt)
        XCTAssertEqual(list.map(\.state), [.active, .active])
        XCTAssertEqual(try store.tokens(ofUser: fixture.owner).count, 1)
        XCTAssertThrowsError(try store.tokens(ofUser: UUID()))
    }

    // MARK: command line

    typealias Outcome = CommandLineTests.Outcome

    /// Runs `staffcast admin token …` against this test's database.
    @discardableResult
    func admin(_ args: [String], stdin: String? = nil, database: Bool = true) throws -> Outcome {
        try CommandLineTests.execute(["admin"] + args + (database ? ["--database-url", fixture.conninfo, "--log-level", "error"] : []),
                                     stdin: stdin, env: ["STAFFCAST_SQL_DIR": TestDatabase.sqlDirectory.path])
    }

    func testTokenCommands() throws {
        let staff = fixture.staff.uuidString.lowercased()

        // issue --expires
        let issued = try admin(["token", "issue", "--user", staff, "--label", "gate 3", "--expires", "7d"])
        XCTAssertEqual(issued.status, 0, issued.stderr)
        let token = issued.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(TokenHasher.looksValid(token), "stdout is the token alone: \(issued.stdout)")
        XCTAssertEqual(try store.authenticate(token: token)?.userID, fixture.staff)
        let record = try XCTUnwrap(try store.validTokens().tokens.first { $0.digest == digest(token) })
        XCTAssertEqual(try XCTUnwrap(record.expiresAt).timeIntervalSinceNow, 7 * 86_400, accuracy: 120)
        for minutes in ["30m", "12h"] {
            XCTAssertEqual(try admin(["token", "issue", "--user", staff, "--expires", minutes]).status, 0)
        }
        for bad in ["7", "7x", "0d", "-1d", "d", "1.5h", "+3d", "99999d", " 7d", "7 d"] {
            let r = try admin(["token", "issue", "--user", staff, "--expires=\(bad)"])
            XCTAssertEqual(r.status, 1, "--expires \(bad) must be refused")
            XCTAssertTrue(r.stdout.isEmpty, "no token for a refused issue: \(r.stdout)")
            XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
            XCTAssertTrue(r.stderr.contains("--expires"), r.stderr)
        }
        XCTAssertEqual(try store.tokens(ofUser: fixture.staff).count, 4, "refused issues store nothing")

        // list, plain and JSON: never the token nor its hash
        let list = try admin(["token", "list", "--user", staff])
        XCTAssertEqual(list.status, 0, list.stderr)
        let lines = list.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 5, list.stdout) // header + 4 tokens
        XCTAssertTrue(lines[0].contains("LAST USED") && lines[0].contains("EXPIRES") && lines[0].contains("REVOKED"))
        XCTAssertTrue(list.stdout.contains("gate 3"))
        let json = try admin(["token", "list", "--user", staff, "--json"])
        XCTAssertEqual(json.status, 0, json.stderr)
        // One JSON document: an array of the tokens, each with its id.
        let objects = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]], json.stdout)
        XCTAssertEqual(objects.count, 4)
        XCTAssertEqual(Set(objects.compactMap { $0["id"] as? String }).count, 4)
        XCTAssertEqual(objects.compactMap { $0["label"] as? String }, ["gate 3"])
        XCTAssertEqual(Set(objects.compactMap { $0["state"] as? String }), ["active"])
        XCTAssertEqual(objects.filter { $0["expires_at"] is String }.count, 3)
        for output in [list.stdout + list.stderr, json.stdout + json.stderr] {
            for secret in [token, fixture.staffToken] {
                XCTAssertFalse(output.contains(secret), "list printed a token")
                XCTAssertFalse(output.contains(digest(secret).hex), "list printed a token's hash")
                XCTAssertFalse(output.contains(String(secret.dropFirst(3).prefix(12))), "list printed part of a token")
            }
            XCTAssertFalse(output.contains("sc_"))
        }

        // revoke one (from stdin), then all of the user's
        let one = try admin(["token", "revoke", "--token", "-"], stdin: token + "\n")
        XCTAssertEqual(one.status, 0, one.stderr)
        XCTAssertTrue(one.stderr.contains("revoked 1 token"), one.stderr)
        XCTAssertNil(try store.authenticate(token: token))
        XCTAssertEqual(try store.authenticate(token: fixture.staffToken)?.userID, fixture.staff)
        let again = try admin(["token", "revoke", "--token", token])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stderr.contains("revoked 0 tokens"), again.stderr)
        let all = try admin(["token", "revoke", "--user", staff])
        XCTAssertEqual(all.status, 0, all.stderr)
        XCTAssertTrue(all.stderr.contains("revoked 3 tokens"), all.stderr)
        XCTAssertNil(try store.authenticate(token: fixture.staffToken))
        XCTAssertEqual(try store.tokens(ofUser: fixture.staff).filter { $0.state == .revoked }.count, 4)
        let revokedList = try admin(["token", "list", "--user", staff])
        XCTAssertEqual(revokedList.stdout.split(separator: "\n").dropFirst().filter { $0.contains("revoked") }.count, 4)

        // revoke refuses unclear requests with one line
        for args in [["token", "revoke"], ["token", "revoke", "--user", staff, "--token", token],
                     ["token", "revoke", "--token", "nope"], ["token", "revoke", "--user", "nope"],
                     ["token", "list", "--user", UUID().uuidString]] {
            let r = try admin(args)
            // An unknown user is "not found" (2); the rest are refused requests (1).
            XCTAssertEqual(r.status, args.last?.count == 36 ? 2 : 1, args.joined(separator: " "))
            XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
        }
        let audit = try store.auditLog(limit: 2)
        XCTAssertEqual(audit.map(\.action), ["token_revoke", "token_revoke"])
    }

    func testTokenHelpTeachesByExample() throws {
        for args in [["token", "--help"], ["token", "issue", "--help"], ["token", "list", "--help"], ["token", "revoke", "--help"]] {
            let r = try admin(args, database: false)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stdout.contains("staffcast admin token"), args.joined(separator: " "))
            XCTAssertTrue(r.stdout.lowercased().contains("example"), "no example in \(args): \(r.stdout)")
        }
        XCTAssertTrue(try admin(["token", "issue", "--help"], database: false).stdout.contains("--expires"))
    }
}

/// A value shared between threads under a lock.
private final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// 004_tokens.sql on a database that already has tokens, and an older staffcast meeting it.
final class TokenMigrationTests: XCTestCase {
    func testUpgradeKeepsExistingTokensAndAnOlderStaffcastRefusesTheNewSchema() throws {
        let conninfo = try makeTestDatabase(migrated: false)
        let conn = try PGConnection(conninfo: conninfo)
        let all = try TestDatabase.migrations()
        let older = Migrator(migrations: all.filter { $0.version <= 3 }, logger: TestDatabase.logger)
        XCTAssertEqual(try older.migrate(conn), [1, 2, 3])
        let user = UUID()
        let token = TokenHasher.generate()
        try conn.query("INSERT INTO profiles (id, display_name) VALUES ($1, 'Early Bird')", [user.uuidString])
        try conn.query("INSERT INTO api_tokens (token_hash, user_id) VALUES ($1, $2)", [TokenHasher.storedHash(of: token), user.uuidString])

        XCTAssertEqual(try Migrator(migrations: all, logger: TestDatabase.logger).migrate(conn), all.map(\.version).filter { $0 > 3 })
        let store = Store(conn)
        XCTAssertEqual(try store.authenticate(token: token)?.userID, user)
        let (tokens, through) = try store.validTokens()
        XCTAssertEqual(tokens, [TokenRecord(digest: TokenHasher.digest(of: token),
                                            identity: Identity(userID: user, displayName: "Early Bird"), expiresAt: nil)])
        XCTAssertEqual(through, 0, "tokens from before the log are loaded, not logged")
        XCTAssertEqual(try store.currentCursors().token, 0)

        XCTAssertThrowsError(try older.verify(conn)) { XCTAssertTrue("\($0)".contains("newer"), "\($0)") }
        XCTAssertThrowsError(try older.migrate(conn)) { XCTAssertTrue("\($0)".contains("newer"), "\($0)") }
    }
}
