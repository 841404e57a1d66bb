import Postgres
import Reconciliation
import TestSupport
import Testing

@Suite("reconcile check: database")
struct PreflightTests {
    @Test func passesOnTheMigratedSchema() throws {
        let database = try TestDatabase.create("preflight_ok")
        _ = try Schema.migrate(try database.connect())
        let settings = try Settings(lookup: ["DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "x"].lookup)
        let results = Preflight.database(settings)
        let failures = results.filter { !$0.passed }
        #expect(failures.isEmpty, "\(failures)")
        #expect(results.count == 5)
    }

    @Test func namesAMissingColumnAndHowToFixIt() throws {
        let database = try TestDatabase.create("preflight_view")
        let connection = try database.connect()
        _ = try Schema.migrate(connection)
        try connection.executeScript(
            """
            CREATE SCHEMA app;
            CREATE VIEW app.credits AS SELECT id, transaction_id, user_id, product_id, delivered_at, revoked_at
              FROM reconcile.deliveries;
            """)
        let settings = try Settings(lookup: [
            "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "x", "RECONCILE_DELIVERIES_RELATION": "app.credits",
        ].lookup)
        let failed = try #require(Preflight.database(settings).first { !$0.passed })
        #expect(failed.name == "\"app\".\"credits\"")
        #expect(failed.detail.contains("missing column quantity"))
        #expect(failed.detail.contains("RECONCILE_DELIVERIES_RELATION"))
    }

    @Test func aWrongPasswordSaysSoWithoutThePassword() throws {
        let database = try TestDatabase.create("preflight_pw")
        let url = database.url.replacingOccurrences(of: "postgres:", with: "postgres:WRONG-secret-")
        let settings = try Settings(lookup: ["DATABASE_URL": url, "RECONCILE_BUNDLE_IDS": "x"].lookup)
        let results = Preflight.database(settings)
        #expect(results.count == 1 && !results[0].passed)
        #expect(results[0].detail.contains("password authentication failed"))
        #expect(!results[0].detail.contains("WRONG-secret-"))
    }

    @Test func anUnmigratedDatabaseIsToldToMigrate() throws {
        let database = try TestDatabase.create("preflight_empty")
        let settings = try Settings(lookup: ["DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "x"].lookup)
        let results = Preflight.database(settings)
        #expect(results.filter { !$0.passed }.allSatisfy { $0.detail.contains("reconcile migrate") })
        #expect(results.filter { !$0.passed }.count == 4)
    }
}
