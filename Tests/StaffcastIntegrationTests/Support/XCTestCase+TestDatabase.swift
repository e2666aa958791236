import XCTest

extension XCTestCase {
    /// A database for this test alone — a copy of the migrated template, or an empty one with
    /// `migrated: false` — dropped when the test ends (after its `defer`s, before `tearDown`),
    /// so a test outside `IntegrationTestCase` leaves no database behind in the shared cluster.
    func makeTestDatabase(migrated: Bool = true) throws -> String {
        let conninfo = migrated ? try TestDatabase.create() : try TestDatabase.createEmpty()
        addTeardownBlock { TestDatabase.drop(conninfo) }
        return conninfo
    }
}
