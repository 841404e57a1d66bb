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
/// with the listener's own store and verification: what a hostile review found (a refund
/// reversed).
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

    /// Apple refunds a credited pack (REFUND), then reverses the refund (REFUND_REVERSED). The
    /// receiver judges the transaction after each: after the first, a refunded_delivery item opens
    /// (suggested action: revoke); after the reversal its judgement no longer finds the refund and
    /// auto-resolves the item, as the nightly run would (auto_resolve_judged.sql): no policy or
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
