import AppStore
import Foundation
import Logging
import Postgres
import Reconciliation
import TestSupport
import Testing

@Suite("Stored notifications")
struct NotificationTests {
    /// The real Apple-signed sandbox TEST notification body (see Tests/AppStoreTests/Vectors/MANIFEST.md).
    static let realBody = try! String(
        contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("AppStoreTests/Vectors/sk2/real-sandbox-TEST-notification.signedPayload.json"),
        encoding: .utf8)

    @Test func appliesOnceSkipsResendsAndRejectsForgeries() async throws {
        let database = try TestDatabase.create("notifications")
        let connection = try database.connect()
        _ = try Schema.migrate(connection)
        let run = try connection.query(
            "INSERT INTO reconcile.runs (window_until, environment) VALUES (now(), 'sandbox') RETURNING id"
        )[0].decode(Int64.self, at: 0)
        for body in [Self.realBody, Self.realBody, #"{"signedPayload": "eyJhbGciOiJub25lIn0.e30."}"#] {
            try connection.execute("INSERT INTO reconcile.notifications (signed_payload) VALUES ($1)", [body])
        }
        let verifier = AppleUploadVerifier(
            receiptClient: nil, roots: .apple, bundleIDs: ["com.Abilities"], logger: Logger(label: "test"))
        let applier = NotificationApplier(verify: verifier.verifyNotification)
        #expect(try await applier.applyPending(runID: run, on: connection) == 1)
        let states = try connection.query(
            "SELECT state, notification_uuid::text, notification_type FROM reconcile.notification_verifications ORDER BY notification_id")
        #expect(try states.map { try $0.decode(String.self, at: 0) } == ["applied", "duplicate", "invalid"])
        #expect(try states[0].decode(String?.self, at: 1) == "5e09dcfc-205e-4ea1-9883-96676f394992")
        #expect(try states[0].decode(String?.self, at: 2) == "TEST")
        // Nothing is applied twice across runs.
        #expect(try await applier.applyPending(runID: run, on: connection) == 0)
    }
}
