import Crypto
import Foundation
import Postgres
@testable import Reconciliation
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
        let (database, connection) = try TestDatabase.migrated("preflight_view")
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

    /// What passes the check is what the job can read: each relation's file reads the columns listed.
    @Test(arguments: zip(["uploads", "deliveries", "products"], Preflight.requiredColumns.map(\.columns)))
    func theReadFileReadsTheRequiredColumns(relation: String, columns: [String]) throws {
        let text = try #require(SQLFile.text("schema/read_\(relation).sql"))
        let statement = text.split(separator: "\n").filter { !$0.hasPrefix("--") }.joined(separator: " ")
        let list = try #require(statement.firstRange(of: "SELECT ").map { statement[$0.upperBound...] })
        let selected = list.prefix { $0 != ":" }.replacing(" FROM ", with: "").split(separator: ",")
        #expect(selected.map { $0.trimmingCharacters(in: .whitespaces) } == columns)
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

@Suite("reconcile check: Apple side")
struct ApplePreflightTests {
    func key(_ path: String) -> Settings.ServerAPIKey {
        let settings = try! Settings(lookup: [
            "RECONCILE_BUNDLE_IDS": "x", "APPSTORE_KEY_ID": "K1", "APPSTORE_ISSUER_ID": "I",
            "APPSTORE_PRIVATE_KEY_FILE": path,
        ].lookup)
        return settings.serverAPIKey!
    }

    @Test func aReadableP8KeyPasses() throws {
        let path = Scratch.root.appendingPathComponent("AuthKey_\(UUID()).p8").path
        try Data(P256.Signing.PrivateKey().pemRepresentation.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(Preflight.checkKey(key(path)).passed)
    }

    @Test func anUnreadableOrWrongKeySaysWhatToFix() throws {
        let missing = Preflight.checkKey(key("/nonexistent/AuthKey.p8"))
        #expect(!missing.passed && missing.detail.contains("cannot read APPSTORE_PRIVATE_KEY_FILE"))
        let path = Scratch.root.appendingPathComponent("not-a-key-\(UUID())").path
        try Data("hello".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let wrong = Preflight.checkKey(key(path))
        #expect(!wrong.passed && wrong.detail.contains("not a PEM P-256 private key"))
    }

    @Test func unreadableRootsFail() async throws {
        let settings = try Settings(lookup: [
            "RECONCILE_BUNDLE_IDS": "x", "APPLE_ROOT_CERTIFICATES": "/nonexistent/root.pem",
            "RECONCILE_RECEIPT_VERIFICATION": "local",
        ].lookup)
        let roots = try #require(await Preflight.apple(settings).first { $0.name == "roots" })
        #expect(!roots.passed && roots.detail.contains("/nonexistent/root.pem"))
    }
}
