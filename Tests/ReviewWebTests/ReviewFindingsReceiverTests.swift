import AppStore
import AppStoreSimulator
import Foundation
import Logging
import Postgres
@testable import Reconciliation
@testable import ReviewWeb
import TestSupport
import Testing

/// The notification receiver's worker (SPEC section 16) driven pass by pass on a real PostgreSQL,
/// with the listener's own store and verification: what a hostile review found (a pass that fails
/// after applying, a refund reversed).
@Suite("Review findings: notification receiver")
struct ReviewFindingsReceiverTests {
    static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Stores `body` as the listener does before answering Apple 200.
    static func receive(_ body: SignedNotificationBody, verifier: AppleUploadVerifier, on connection: Connection)
        async throws
    {
        let receiver = NotificationReceiver(forwarding: false, verify: verifier.verifyNotification)
        let text = #"{"signedPayload":"\#(body.signedPayload)"}"#
        let verified = try await receiver.verify(Array(text.utf8)).get()
        _ = try receiver.store(verified, on: connection)
    }

    static func worker(_ settings: Settings, _ verifier: AppleUploadVerifier) -> ReceiverWorker {
        ReceiverWorker(
            settings: settings, applier: NotificationApplier(verify: verifier.verifyNotification), answerer: nil,
            forwarder: nil, logger: quiet)
    }

    /// Applied notifications whose transaction is not queued for judgement: none may be left, or
    /// no later pass judges them (they are no longer pending) before the nightly run.
    static func appliedNotNoted(on connection: Connection) throws -> Int {
        try connection.query(
            """
            SELECT count(*) FROM reconcile.notification_verifications v
             WHERE v.state = 'applied' AND v.transaction_id IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM reconcile.receiver_judgements j WHERE j.transaction_id = v.transaction_id)
            """
        )[0].decode(Int.self, at: 0)
    }

    /// A refund Apple was answered 200 for, and a pass whose session is lost (a database restart,
    /// a failover, a kill -9) while it applies it: the notification is applied and its transaction
    /// queued for judgement in one transaction (note_judgements.sql in applyEndpoint's batch), so
    /// the pass leaves either both or neither, and the worker's next passes, on a new session as
    /// ReceiverWorker.run opens, still turn the credited refund into a refunded_delivery item.
    /// (Noted as a separate statement after the commit, the notification was no longer pending
    /// and no later pass ever judged it.)
    @Test func aPassThatFailsAfterApplyingStillJudgesWhatItApplied() async throws {
        let world = try NotificationReceiverTests.World("rv_receiver_note_lost")
        let pack = try world.deliveredPack(user: "amy", customer: "amy-apple-id")
        // The first note fails, as a statement on a lost session would.
        try world.connection.execute("CREATE SEQUENCE public.rv_note_attempts")
        try world.connection.execute(
            """
            CREATE FUNCTION public.rv_fail_first_note() RETURNS trigger LANGUAGE plpgsql AS $f$
            BEGIN
                IF nextval('public.rv_note_attempts') = 1 THEN
                    RAISE EXCEPTION 'terminating connection due to administrator command';
                END IF;
                RETURN NULL;
            END $f$
            """)
        try world.connection.execute(
            """
            CREATE TRIGGER rv_fail_first_note BEFORE INSERT ON reconcile.receiver_judgements
               FOR EACH STATEMENT EXECUTE FUNCTION public.rv_fail_first_note()
            """)
        try await world.sim.withRunning { running in
            let settings = try world.settings(running)
            try await AppleServices.withVerifierAndServerAPI(settings: settings, logger: Self.quiet) { verifier, _ in
                _ = try world.sim.refundTransaction(pack.transactionId)
                let refund = try world.sim.signNotification(type: .refund, transactionId: pack.transactionId)
                try await Self.receive(refund, verifier: verifier, on: world.connection)
                let worker = Self.worker(settings, verifier)
                await #expect(throws: (any Error).self, "the first pass fails while applying") {
                    _ = try await worker.pass(on: try world.database.connect())
                }
                #expect(try Self.appliedNotNoted(on: world.connection) == 0, "nothing applied is left unnoted")
                // The worker's next passes, on a new session.
                let fresh = try world.database.connect()
                for _ in 0..<3 { _ = try await worker.pass(on: fresh) }
                #expect(try world.items() == ["refunded_delivery \(pack.transactionId) open"])
            }
        }
    }

    /// The same between the batches of a burst: the first batch (100 notifications) commits with
    /// its transaction noted, the session is lost in the second; the next pass applies the rest and
    /// both refunds become items.
    @Test func aBurstCutBetweenBatchesStillJudgesEveryBatch() async throws {
        let world = try NotificationReceiverTests.World("rv_receiver_burst_cut")
        let first = try world.deliveredPack(user: "amy", customer: "amy-apple-id")
        let second = try world.deliveredPack(user: "bob", customer: "bob-apple-id")
        try await world.sim.withRunning { running in
            let settings = try world.settings(running)
            try await AppleServices.withVerifierAndServerAPI(settings: settings, logger: Self.quiet) { verifier, _ in
                _ = try world.sim.refundTransaction(first.transactionId)
                _ = try world.sim.refundTransaction(second.transactionId)
                // The worker's first batch: 100 notifications of the first refund, each its own
                // notificationUUID; the second refund's is alone in the second batch.
                for _ in 0..<100 {
                    let refund = try world.sim.signNotification(type: .refund, transactionId: first.transactionId)
                    try await Self.receive(refund, verifier: verifier, on: world.connection)
                }
                let refund = try world.sim.signNotification(type: .refund, transactionId: second.transactionId)
                try await Self.receive(refund, verifier: verifier, on: world.connection)
                let last = try world.connection.query("SELECT max(id) FROM reconcile.notifications")[0]
                    .decode(Int64.self, at: 0)
                // Recording the second batch's notification fails once, as on a lost session.
                try world.connection.execute("CREATE SEQUENCE public.rv_second_batch_attempts")
                try world.connection.execute(
                    """
                    CREATE FUNCTION public.rv_fail_second_batch() RETURNS trigger LANGUAGE plpgsql AS $f$
                    BEGIN
                        IF NEW.notification_id = \(last) AND nextval('public.rv_second_batch_attempts') = 1 THEN
                            RAISE EXCEPTION 'terminating connection due to administrator command';
                        END IF;
                        RETURN NEW;
                    END $f$
                    """)
                try world.connection.execute(
                    """
                    CREATE TRIGGER rv_fail_second_batch BEFORE INSERT ON reconcile.notification_verifications
                       FOR EACH ROW EXECUTE FUNCTION public.rv_fail_second_batch()
                    """)
                let worker = Self.worker(settings, verifier)
                await #expect(throws: (any Error).self, "the first pass fails in its second batch") {
                    _ = try await worker.pass(on: try world.database.connect())
                }
                let applied = try world.connection.query(
                    "SELECT count(*) FROM reconcile.notification_verifications WHERE state = 'applied'"
                )[0].decode(Int.self, at: 0)
                #expect(applied == 100, "the first batch committed")
                #expect(try Self.appliedNotNoted(on: world.connection) == 0, "nothing applied is left unnoted")
                let fresh = try world.database.connect()
                for _ in 0..<3 { _ = try await worker.pass(on: fresh) }
                #expect(
                    try world.items() == [
                        "refunded_delivery \(first.transactionId) open", "refunded_delivery \(second.transactionId) open",
                    ].sorted())
            }
        }
    }

    /// Apple refunds a credited pack (REFUND), then reverses the refund (REFUND_REVERSED). The
    /// receiver judges the transaction after each: after the first, a refunded_delivery item opens
    /// (suggested action: revoke); after the reversal its judgement no longer finds the refund and
    /// auto-resolves the item, as the nightly run would (82_queue_auto_resolve.sql, told the transactions): no policy or
    /// person can revoke the goods of a customer who paid in the meantime.
    @Test func aReversedRefundLeavesNoOpenRefundedDeliveryItem() async throws {
        let world = try NotificationReceiverTests.World("rv_receiver_reversal")
        let pack = try world.deliveredPack(user: "amy", customer: "amy-apple-id")
        try await world.sim.withRunning { running in
            let settings = try world.settings(running)
            try await AppleServices.withVerifierAndServerAPI(settings: settings, logger: Self.quiet) { verifier, _ in
                let worker = Self.worker(settings, verifier)
                _ = try world.sim.refundTransaction(pack.transactionId)
                let refund = try world.sim.signNotification(type: .refund, transactionId: pack.transactionId)
                try await Self.receive(refund, verifier: verifier, on: world.connection)
                _ = try await worker.pass(on: world.connection)
                #expect(try world.items() == ["refunded_delivery \(pack.transactionId) open"])

                _ = try world.sim.reverseRefund(pack.transactionId)
                let reversal = try world.sim.signNotification(type: .refundReversed, transactionId: pack.transactionId)
                try await Self.receive(reversal, verifier: verifier, on: world.connection)
                let pass = try await worker.pass(on: world.connection)
                #expect(pass.judged == 1 && pass.itemsAutoResolved == 1, "\(pass)")
                let revoked = try world.connection.query(
                    "SELECT revocation_date IS NOT NULL FROM reconcile.apple_transactions WHERE transaction_id = $1",
                    [pack.transactionId])[0].decode(Bool.self, at: 0)
                #expect(!revoked, "the white table knows the refund was reversed")
                #expect(try world.items() == ["refunded_delivery \(pack.transactionId) auto_resolved"])
                let event = try world.connection.query(
                    """
                    SELECT e.actor || ' ' || e.from_status || ' ' || e.to_status || ' ' || (e.run_id = $1)::text
                      FROM reconcile.review_events e ORDER BY e.id DESC LIMIT 1
                    """, [try #require(pass.runID)])[0].decode(String.self, at: 0)
                #expect(event == "receiver open auto_resolved true")
            }
        }
    }

    /// What holds a finding back holds its item: an upload reporting the transaction is still
    /// being verified when the reversal is judged, so the transaction is not judged (diff_blocked)
    /// and its item stays as it is, for the nightly run to judge once the upload is verified.
    @Test func aReversedRefundWaitsWhileAnUploadOfItIsBeingVerified() async throws {
        let world = try NotificationReceiverTests.World("rv_receiver_reversal_blocked")
        let pack = try world.deliveredPack(user: "amy", customer: "amy-apple-id")
        try await world.sim.withRunning { running in
            let settings = try world.settings(running)
            try await AppleServices.withVerifierAndServerAPI(settings: settings, logger: Self.quiet) { verifier, _ in
                let worker = Self.worker(settings, verifier)
                _ = try world.sim.refundTransaction(pack.transactionId)
                let refund = try world.sim.signNotification(type: .refund, transactionId: pack.transactionId)
                try await Self.receive(refund, verifier: verifier, on: world.connection)
                _ = try await worker.pass(on: world.connection)
                #expect(try world.items() == ["refunded_delivery \(pack.transactionId) open"])

                try world.connection.execute(
                    """
                    INSERT INTO reconcile.upload_verifications (upload_id, state)
                    SELECT id, 'pending' FROM reconcile.receipt_uploads WHERE claimed_transaction_id = $1
                    """, [pack.transactionId])
                _ = try world.sim.reverseRefund(pack.transactionId)
                let reversal = try world.sim.signNotification(type: .refundReversed, transactionId: pack.transactionId)
                try await Self.receive(reversal, verifier: verifier, on: world.connection)
                let pass = try await worker.pass(on: world.connection)
                #expect(pass.judged == 1 && pass.itemsAutoResolved == 0, "\(pass)")
                #expect(try world.items() == ["refunded_delivery \(pack.transactionId) open"])
            }
        }
    }
}
