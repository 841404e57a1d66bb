import AppStoreSimulator
import Crypto
import _CryptoExtras
import Foundation
import Logging
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// Google Play uploads through a whole run (SPEC section 18): signed purchases verified locally
/// under the package's licence key and judged with the nightly rules beside Apple's, bad input
/// `invalid` with Google Play's precise reason, never a stopped run.
@Suite("Scenario: Google Play uploads")
struct PlayUploadScenarioTests {
    static let package = "com.hncs.szj.android"
    static let quiet = Logger(label: "job", factory: { _ in SwiftLogNoOpLogHandler() })

    /// A licence key pair, as Play Console's (RSA-2048).
    struct LicenceKey {
        let key = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
        var setting: String { "\(PlayUploadScenarioTests.package)=\(key.publicKey.derRepresentation.base64EncodedString())" }

        /// The upload's payload, `{"purchaseData", "signature"}`, signed over `purchaseData`'s bytes.
        func payload(_ purchaseData: String, signing signed: String? = nil) throws -> String {
            let signature = try key.signature(
                for: Insecure.SHA1.hash(data: Data((signed ?? purchaseData).utf8)), padding: .insecurePKCS1v1_5)
            let object: [String: String] = ["purchaseData": purchaseData, "signature": signature.rawRepresentation.base64EncodedString()]
            return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
        }
    }

    static func purchaseData(order: String, token: String, account: String?, state: Int = 0, package: String = package,
                             bought: Date) -> String {
        let account = account.map { #","obfuscatedAccountId":"\#($0)""# } ?? ""
        return #"{"orderId":"\#(order)","packageName":"\#(package)","productId":"coin42","purchaseTime":\#(Int64(bought.timeIntervalSince1970 * 1000)),"purchaseState":\#(state),"purchaseToken":"\#(token)"\#(account),"quantity":1,"acknowledged":true}"#
    }

    @Test func playUploadsAreVerifiedAndJudgedBesideApples() async throws {
        let (database, connection) = try TestDatabase.migrated("play_uploads")
        try connection.executeScript(
            "INSERT INTO reconcile.products VALUES ('coin42', 'consumable', 6000, 'CNY');")
        let key = LicenceKey()
        let bought = Date().addingTimeInterval(-2 * 86_400)
        let paid = Self.purchaseData(order: "GPA.1000-0000-0000-00001", token: "tok-1", account: "alice", bought: bought)
        let delivered = Self.purchaseData(order: "GPA.1000-0000-0000-00002", token: "tok-2", account: "bob", bought: bought)
        let pending = Self.purchaseData(order: "GPA.1000-0000-0000-00003", token: "tok-3", account: "carol", state: 4, bought: bought)
        let foreign = Self.purchaseData(order: "GPA.1000-0000-0000-00004", token: "tok-4", account: "dan", package: "com.other.app", bought: bought)
        let keyless = Self.purchaseData(order: "GPA.1000-0000-0000-00005", token: "tok-5", account: "gina", package: "com.third.app", bought: bought)
        // A package of no key of its own, signed with this app's key (as the simulator signs every
        // package with its one key pair): Google signed it, so it is another app's, a foreign_bundle.
        let unlisted = Self.purchaseData(order: "GPA.1000-0000-0000-00006", token: "tok-6", account: "hana", package: "com.fourth.app", bought: bought)
        let reserialised = try key.payload(paid.replacingOccurrences(of: ",", with: ", "), signing: paid)
        let uploads: [(user: String, payload: String, claimed: String?)] = [
            ("alice", try key.payload(paid), "GPA.1000-0000-0000-00001"),
            ("bob", try key.payload(delivered), "GPA.1000-0000-0000-00002"),
            ("carol", try key.payload(pending), "GPA.1000-0000-0000-00003"),
            ("dan", try key.payload(foreign), nil),
            ("eve", reserialised, nil),
            ("frank", "not json at all", nil),
            ("gina", try LicenceKey().payload(keyless), nil),
            ("hana", try key.payload(unlisted), nil),
        ]
        for upload in uploads {
            try connection.execute(
                """
                INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at)
                VALUES ($1, 'play_purchase', $2, $3, $4)
                """, [upload.user, upload.payload, upload.claimed, bought])
        }
        for (order, user) in [("GPA.1000-0000-0000-00002", "bob"), ("GPA.1000-0000-0000-00003", "carol")] {
            try connection.execute(
                """
                INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at)
                VALUES ($1, $2, 'coin42', 1, $3)
                """, [order, user, bought])
        }
        let settings = try Settings(lookup: [
            "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
            // Another app's key too: its genuine purchase is a foreign_bundle, not an unverifiable one.
            "GOOGLE_PLAY_PACKAGE_NAMES": Self.package,
            "GOOGLE_PLAY_LICENSE_KEYS": key.setting + ",com.other.app=" + key.key.publicKey.derRepresentation.base64EncodedString(),
            "RECONCILE_REPORT_DIR": Scratch.root.appendingPathComponent("play-\(UUID().uuidString)").path,
            "RECONCILE_RECEIPT_VERIFICATION": "local",
        ].lookup)
        let report = try await Stores.withJob(settings: settings, logger: Self.quiet) {
            try await $0.run(.init(since: bought.addingTimeInterval(-3600)))
        }
        #expect(try report.findings.map { "\($0.kind.rawValue) \($0.transactionID ?? "-") \($0.userID ?? "-")" }.sorted() == [
            "foreign_bundle - dan", "foreign_bundle - hana", "missed_delivery GPA.1000-0000-0000-00001 alice",
        ])
        let verdicts = try connection.query(
            """
            SELECT u.user_id, v.state, v.store, v.method, v.error_code FROM reconcile.upload_verifications v
              JOIN reconcile.receipt_uploads u ON u.id = v.upload_id ORDER BY u.user_id
            """).map { row in
                [try row.decode(String.self, at: 0), try row.decode(String.self, at: 1), try row.decode(String.self, at: 2),
                 try row.decode(String?.self, at: 3) ?? "-", try row.decode(String?.self, at: 4) ?? "-"].joined(separator: " ")
            }
        #expect(verdicts == [
            "alice verified google_play play_signature -", "bob verified google_play play_signature -",
            "carol verified google_play play_signature -", "dan verified google_play play_signature -",
            "eve invalid google_play - play_signature_mismatch", "frank invalid google_play - play_payload_not_json",
            "gina invalid google_play - play_package_without_key", "hana verified google_play play_signature -",
        ])
        let stores = try connection.query("SELECT DISTINCT store FROM reconcile.review_items").map { try $0.decode(String.self, at: 0) }
        #expect(stores == ["google_play"])
    }

    /// With Play off, a Play upload waits as `store_not_configured` and nothing of it is judged.
    @Test func withPlayOffAPlayUploadIsNotConfiguredAndNothingIsJudged() async throws {
        let (database, connection) = try TestDatabase.migrated("play_off")
        let key = LicenceKey()
        let bought = Date().addingTimeInterval(-2 * 86_400)
        try connection.execute(
            """
            INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, uploaded_at) VALUES ('alice', 'play_purchase', $1, $2)
            """, [try key.payload(Self.purchaseData(order: "GPA.2", token: "t", account: nil, bought: bought)), bought])
        let settings = try Settings(lookup: [
            "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
            "RECONCILE_REPORT_DIR": Scratch.root.appendingPathComponent("play-\(UUID().uuidString)").path,
            "RECONCILE_RECEIPT_VERIFICATION": "local",
        ].lookup)
        let report = try await Stores.withJob(settings: settings, logger: Self.quiet) {
            try await $0.run(.init(since: bought.addingTimeInterval(-3600)))
        }
        #expect(try report.findings.isEmpty)
        #expect(try connection.query("SELECT error_code FROM reconcile.upload_verifications")[0].decode(String.self, at: 0)
            == "store_not_configured")
    }

    /// With a service account, the Developer API is the authority over what the signed data said
    /// when bought: a partial refund by quantity and a test purchase are seen from the upload alone,
    /// on the simulator's Google Play, with one OAuth token for the whole run.
    @Test func withAServiceAccountGoogleSaysTheStateToday() async throws {
        let (database, connection) = try TestDatabase.migrated("play_api_uploads")
        try connection.executeScript("INSERT INTO reconcile.products VALUES ('coin42', 'consumable', 6000, 'CNY');")
        let state = Scratch.root.appendingPathComponent("sim-\(UUID().uuidString)")
        var logger = Logger(label: "sim")
        logger.logLevel = .critical
        let sim = try AppStoreSimulator(configuration: .init(
            stateDirectory: state, logger: logger, playPackageNames: [Self.package]))
        let bought = Date().addingTimeInterval(-2 * 86_400)
        let millis = Int64(bought.timeIntervalSince1970 * 1000)
        let partial = try sim.play.createPurchase(.init(
            productId: "coin42", quantity: 3, obfuscatedAccountId: "alice", acknowledged: true, purchaseTimeMillis: millis))
        _ = try sim.play.voidPurchase(partial.purchaseToken, quantity: 1)
        let tester = try sim.play.createPurchase(.init(
            productId: "coin42", obfuscatedAccountId: "bob", testPurchase: true, acknowledged: true, purchaseTimeMillis: millis))
        for (user, purchase) in [("alice", partial), ("bob", tester)] {
            let payload = String(decoding: try JSONSerialization.data(
                withJSONObject: ["purchaseData": purchase.purchaseData, "signature": purchase.signature]), as: UTF8.self)
            try connection.execute(
                """
                INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at)
                VALUES ($1, 'play_purchase', $2, $3, $4)
                """, [user, payload, purchase.orderId, bought])
            try connection.execute(
                """
                INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at)
                VALUES ($1, $2, 'coin42', $3, $4)
                """, [try #require(purchase.orderId), user, user == "alice" ? 3 : 1, bought])
        }
        try await sim.withRunning { running in
            let play = try await running.playSettings()
            let settings = try Settings(lookup: play.jobEnvironment.merging([
                "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
                "RECONCILE_REPORT_DIR": state.appendingPathComponent("reports").path,
                "RECONCILE_RECEIPT_VERIFICATION": "local",
            ]) { $1 }.lookup)
            let report = try await Stores.withJob(settings: settings, logger: Self.quiet) {
                try await $0.run(.init(since: bought.addingTimeInterval(-3600)))
            }
            #expect(try report.findings.map { "\($0.kind.rawValue) \($0.userID ?? "-")" }.sorted() == [
                "environment_mismatch bob", "refunded_delivery alice",
            ])
            let methods = try connection.query("SELECT DISTINCT method FROM reconcile.upload_verifications")
                .map { try $0.decode(String.self, at: 0) }
            #expect(methods == ["play_api"])
            let refunded = try connection.query(
                "SELECT refunded_quantity FROM reconcile.apple_transactions WHERE transaction_id = $1", [try #require(partial.orderId)]
            )[0].decode(Int?.self, at: 0)
            #expect(refunded == 1)
            #expect(sim.play.stats.tokensIssued == 1)
        }
    }
}
