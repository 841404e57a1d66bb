import AppStore
import Foundation
import Logging
import Postgres
import Synchronization
import TestSupport
import Testing

@testable import Reconciliation

/// The worker of `reconcile notifications receive` reuses what its listener verified, and only
/// that: the row the listener stored, holding the body it verified.
@Suite("Verdicts of the receiver's listener")
struct ListenerVerdictsTests {
    static let verdict = NotificationVerdict.verified(
        uuid: UUID(), type: NotificationType(rawValue: "REUSED"), subtype: nil, signedDate: nil, transaction: nil)

    @Test func aVerdictIsTakenOnceForItsRowAndItsBodyOnly() {
        let verdicts = ListenerVerdicts()
        verdicts.record(id: 1, body: "a", verdict: Self.verdict)
        verdicts.record(id: 2, body: "b", verdict: Self.verdict)
        #expect(verdicts.take(id: 1, body: "a") == Self.verdict)
        #expect(verdicts.take(id: 1, body: "a") == nil)
        #expect(verdicts.take(id: 2, body: "b changed") == nil)
        #expect(verdicts.take(id: 2, body: "b") == nil)
        #expect(verdicts.take(id: 3, body: "a") == nil)
    }

    @Test func onlyTheLatestRowsKeepTheirVerdicts() {
        let verdicts = ListenerVerdicts(capacity: 3)
        for id in 1...10 {
            verdicts.record(id: Int64(id), body: "\(id)", verdict: Self.verdict)
            if id % 2 == 0 { _ = verdicts.take(id: Int64(id), body: "\(id)") }
        }
        #expect(verdicts.count <= 3)
        #expect(verdicts.take(id: 9, body: "9") == Self.verdict)
        #expect(verdicts.take(id: 5, body: "5") == nil)
    }

    /// A row the app's endpoint inserted, and a row whose body is not the one verified, are
    /// verified by the applier; the row the listener stored is applied with the listener's verdict
    /// (here one verification would not give: type REUSED, so that its use shows).
    @Test func theApplierVerifiesEveryRowButTheListenersOwn() async throws {
        let (_, connection) = try TestDatabase.migrated("listener_verdicts")
        let run = try connection.query(
            "INSERT INTO reconcile.runs (window_until, environment) VALUES (now(), 'sandbox') RETURNING id"
        )[0].decode(Int64.self, at: 0)
        let forged = #"{"signedPayload": "eyJhbGciOiJub25lIn0.e30."}"#
        var ids: [Int64] = []
        for body in [forged, forged, forged] {
            ids.append(try connection.query(
                "INSERT INTO reconcile.notifications (signed_payload) VALUES ($1) RETURNING id", [body]
            )[0].decode(Int64.self, at: 0))
        }
        let verdicts = ListenerVerdicts()
        verdicts.record(id: ids[0], body: forged, verdict: Self.verdict)
        verdicts.record(id: ids[1], body: forged + " ", verdict: Self.verdict)
        let verifier = AppleUploadVerifier(
            receiptClient: nil, roots: .apple, bundleIDs: ["com.Abilities"], logger: Logger(label: "test"))
        let applier = NotificationApplier(verify: verifier.verifyNotification, known: verdicts)
        #expect(try await applier.applyPending(runID: run, on: connection) == 1)
        let states = try connection.query(
            "SELECT state || ' ' || coalesce(notification_type, '-') FROM reconcile.notification_verifications ORDER BY notification_id"
        ).map { try $0.decode(String.self, at: 0) }
        #expect(states == ["applied REUSED", "invalid -", "invalid -"])
        #expect(verdicts.count == 0)
    }

    /// The receiver's worker ends its pass at a batch that drained the table (`untilShortBatch`):
    /// a row stored while that batch is applied waits for the next pass, which applies it, instead
    /// of being chased one small batch at a time. Without it the applier drains the table. Here the
    /// verification of the first row stores a second, once.
    @Test(arguments: [true, false])
    func theReceiversPassEndsAtABatchThatDrainedTheTable(untilShortBatch: Bool) async throws {
        let (database, connection) = try TestDatabase.migrated("short_batch")
        let run = try connection.query(
            "INSERT INTO reconcile.runs (window_until, environment) VALUES (now(), 'sandbox') RETURNING id"
        )[0].decode(Int64.self, at: 0)
        let store = "INSERT INTO reconcile.notifications (signed_payload) VALUES ($1)"
        try connection.execute(store, ["first"])
        let storedOne = Mutex(false)
        let applier = NotificationApplier(verify: { _ in
            if storedOne.withLock({ stored in defer { stored = true }; return !stored }) {
                _ = try? database.connect().execute(store, ["second"])
            }
            return .invalid(reason: "not a notification")
        })
        let verified = "SELECT count(*) FROM reconcile.notification_verifications"
        _ = try await applier.applyEndpoint(runID: run, on: connection, batchSize: 2, untilShortBatch: untilShortBatch)
        #expect(try connection.query(verified)[0].decode(Int.self, at: 0) == (untilShortBatch ? 1 : 2))
        _ = try await applier.applyEndpoint(runID: run, on: connection, batchSize: 2, untilShortBatch: untilShortBatch)
        #expect(try connection.query(verified)[0].decode(Int.self, at: 0) == 2)
    }
}
