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
        let (_, connection) = try TestDatabase.migrated("notifications")
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

    /// Issue 24 item 7: sixty 10 MB bodies in `reconcile.notifications` (the app's endpoint
    /// stores bodies unverified) are refused by their size, unread (`payload_too_large`), and
    /// `reconcile run` stays within SPEC section 11's 150 MB: its peak resident memory as the
    /// kernel reports it for the child process. Apple's real notification beside them is applied.
    @Test func hugeStoredBodiesAreRefusedUnreadAndTheRunStaysSmall() async throws {
        let (database, connection) = try TestDatabase.migrated("notifications_huge")
        try connection.execute("INSERT INTO reconcile.notifications (signed_payload) VALUES ($1)", [Self.realBody])
        try connection.execute(
            """
            INSERT INTO reconcile.notifications (signed_payload)
            SELECT '{"signedPayload": "' || repeat('A', 10000000) || '"}' FROM generate_series(1, 60)
            """)
        let scratch = Scratch.root.appendingPathComponent("notifications-huge-\(getpid())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let run = try await MeasuredRun.run(
            try ChildProcess.executable("reconcile"), arguments: ["run", "--log-level", "notice"],
            environment: [
                "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.Abilities",
                "RECONCILE_REPORT_DIR": scratch.appendingPathComponent("reports").path,
            ],
            logDirectory: scratch, label: "run")
        #expect(run.status == 0, "\(run.output)")
        #expect(run.peakResidentBytes <= 150 << 20, "peak RSS \(run.peakResidentBytes >> 20) MB")
        let states = try connection.query(
            """
            SELECT v.state, count(*), bool_and(v.error LIKE 'payload_too_large%') FROM reconcile.notifications n
              JOIN reconcile.notification_verifications v ON v.notification_id = n.id
             GROUP BY v.state ORDER BY v.state
            """
        ).map { "\(try $0.decode(String.self, at: 0)) \(try $0.decode(Int.self, at: 1)) \(try $0.decode(Bool?.self, at: 2) ?? false)" }
        #expect(states == ["applied 1 false", "invalid 60 true"])
    }
}
