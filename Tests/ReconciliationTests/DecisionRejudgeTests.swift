import Foundation
import Logging
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// Issue 36 items 1, 5 and 6 (SPEC sections 6 and 17): a decision that makes the app act is taken
/// on the truth of its moment. The item's transaction is judged again with the nightly rules in
/// the decision's transaction; a finding gone meanwhile (the app's late callback credited the
/// purchase, the app revoked or moved the goods itself) queues nothing and auto-resolves the item;
/// an approval takes effect exactly as decided or is sent back; a resolution the kind does not
/// allow is refused. Every world here is real: Apple's transactions, verified uploads and the
/// ledger, judged by the diff into the queue, so the rules can judge them again.
@Suite("Decisions on the current truth")
struct DecisionRejudgeTests {
    static let bundle = "com.hncs.szj"
    static let token = "6f1c1f4e-8a4a-4b7e-9a55-3a1f0c2b7d10"

    /// A real queue: four purchases a day old, each uploaded (verified) by its account, judged
    /// by a run over the whole history:
    /// - `T-MISS` (6.00 CNY), uploaded by `u1`, never credited: `missed_delivery`, grant to u1;
    /// - `T-DUP`, uploaded by `u2`, credited twice to u2: `duplicate_delivery`, revoke from u2;
    /// - `T-WRONG`, bought with a token the app maps to `u4`, uploaded by and credited to `u5`:
    ///   `wrong_account`, move from u5 to u4;
    /// - `T-REF`, refunded by Apple, uploaded by and credited to `u6`: `refunded_delivery`;
    /// - `T-TOK` (680.00 CNY), bought with a token the app has not mapped yet, uploaded by
    ///   `uploader-1`, never credited: `missed_delivery`, grant to uploader-1 (its uploader).
    struct World {
        let database: TestDatabase
        let connection: Connection
        let settings: Settings

        init(_ name: String) throws {
            (database, connection) = try TestDatabase.migrated(name)
            let values = ["DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": DecisionRejudgeTests.bundle]
            settings = try Settings(lookup: { values[$0] })
            try plant()
            try judge()
        }

        var judgement: DecisionJudgement { get throws { try .rules(settings) } }

        func service(approval: ApprovalThreshold = .none) throws -> ReviewDecisions {
            ReviewDecisions(connection: connection, approval: approval, judgement: try judgement)
        }

        private func plant() throws {
            let purchases: [(String, Int64, String?, Bool, String, [String])] = [
                // (transaction, price, token, refunded, uploader, credited to)
                ("T-MISS", 6_000, nil, false, "u1", []),
                ("T-DUP", 6_000, nil, false, "u2", ["u2", "u2"]),
                ("T-WRONG", 6_000, DecisionRejudgeTests.token, false, "u5", ["u5"]),
                ("T-REF", 6_000, nil, true, "u6", ["u6"]),
                ("T-TOK", 680_000, "0b6e2c0e-59a4-4bd5-8f59-0d8f3e0a9a11", false, "uploader-1", []),
            ]
            try connection.execute(
                "INSERT INTO reconcile.account_tokens (app_account_token, user_id) VALUES ($1::uuid, 'u4')",
                [DecisionRejudgeTests.token])
            for (index, (transaction, price, token, refunded, uploader, credited)) in purchases.enumerated() {
                try connection.execute(
                    """
                    INSERT INTO reconcile.apple_transactions
                        (transaction_id, original_transaction_id, product_id, bundle_id, environment, quantity,
                         purchase_date, revocation_date, app_account_token, source, signed_date, price_milli, currency)
                    VALUES ($1, $1, 'coins_600', $2, 'Production', 1, now() - interval '1 day',
                            CASE WHEN $3 THEN now() - interval '2 hours' END, $4::uuid, 'jws', now() - interval '1 hour',
                            $5, 'CNY')
                    """, [transaction, DecisionRejudgeTests.bundle, refunded, token, price])
                try connection.execute(
                    """
                    INSERT INTO reconcile.receipt_uploads (id, user_id, kind, payload, claimed_transaction_id, uploaded_at)
                    VALUES ($1, $2, 'signed_transaction', 'payload', $3, now() - interval '1 day')
                    """, [index + 1, uploader, transaction])
                try connection.execute(
                    """
                    INSERT INTO reconcile.upload_verifications (upload_id, state, bundle_id, environment)
                    VALUES ($1, 'verified', $2, 'Production')
                    """, [index + 1, DecisionRejudgeTests.bundle])
                try connection.execute(
                    """
                    INSERT INTO reconcile.transaction_claims (transaction_id, upload_id, user_id, source)
                    VALUES ($1, $2, $3, 'jws')
                    """, [transaction, index + 1, uploader])
                for user in credited { try credit(transaction, to: user) }
            }
        }

        /// The app credits `transaction` to `user` (its late callback, or a hand-made grant).
        func credit(_ transaction: String, to user: String) throws {
            try connection.execute(
                """
                INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at)
                VALUES ($1, $2, 'coins_600', 1, now() - interval '20 hours')
                """, [transaction, user])
        }

        /// The app takes back one unrevoked credit of `transaction` held by `user`.
        func revokeOne(_ transaction: String, from user: String) throws {
            try connection.execute(
                """
                UPDATE reconcile.deliveries SET revoked_at = now()
                 WHERE id = (SELECT max(id) FROM reconcile.deliveries
                              WHERE transaction_id = $1 AND user_id = $2 AND revoked_at IS NULL)
                """, [transaction, user])
        }

        /// A run over the whole history, its findings upserted into the queue.
        func judge() throws {
            let run = try connection.query(
                "INSERT INTO reconcile.runs (window_until, environment) VALUES (now(), 'production') RETURNING id"
            )[0].decode(Int64.self, at: 0)
            let differ = Differ(relations: .standard)
            try connection.transaction {
                try differ.computeFindings(
                    Differ.Parameters(
                        runID: run, bundleIDs: [DecisionRejudgeTests.bundle], environment: .production,
                        judgeBefore: Date().addingTimeInterval(-1800), since: nil, until: Date(), serverAPIEnabled: false),
                    on: connection)
                _ = try differ.upsertQueue(runID: run, on: connection)
            }
        }

        func item(_ transaction: String, _ kind: FindingKind) throws -> Int64 {
            try #require(try connection.queryFirst(
                "SELECT id FROM reconcile.review_items WHERE transaction_id = $1 AND kind = $2", transaction, kind.rawValue
            )?.decode(Int64.self, at: 0), "no \(kind) item for \(transaction)")
        }

        func status(_ id: Int64) throws -> String {
            try connection.query("SELECT status FROM reconcile.review_items WHERE id = $1", id)[0].decode(String.self, at: 0)
        }

        func outboxRows(_ id: Int64) throws -> Int {
            try connection.query("SELECT count(*)::int FROM reconcile.action_outbox WHERE review_item_id = $1", id)[0]
                .decode(Int.self, at: 0)
        }

        func lastEvent(_ id: Int64) throws -> (actor: String, to: String, note: String?) {
            let row = try connection.query(
                "SELECT actor, to_status, note FROM reconcile.review_events WHERE review_item_id = $1 ORDER BY id DESC LIMIT 1",
                id)[0]
            return (try row.decode(String.self, at: 0), try row.decode(String.self, at: 1), try row.decode(String?.self, at: 2))
        }
    }

    /// Expects `body` to be refused because the finding is gone, the item auto-resolved with what
    /// changed, and nothing queued.
    func expectGone(_ world: World, _ id: Int64, _ body: () throws -> Void) throws {
        #expect {
            try body()
        } throws: { error in
            guard case .findingGone(let gone, _, let now) = error as? ReviewError else { return false }
            return gone == id && now.contains("any more")
        }
        #expect(try world.status(id) == "auto_resolved")
        #expect(try world.outboxRows(id) == 0)
        let event = try world.lastEvent(id)
        #expect(event.actor == ReviewActor.jobName && event.to == "auto_resolved")
        #expect(event.note?.contains("judged again") == true, "\(event.note ?? "")")
    }

    // MARK: Item 1, each action

    /// The late callback credits the purchase in the morning; granting it in the afternoon queues
    /// nothing (it would credit the customer twice).
    @Test func aGrantOfAPurchaseTheAppCreditedMeanwhileQueuesNothing() throws {
        let world = try World("rejudge_grant")
        let id = try world.item("T-MISS", .missedDelivery)
        try world.credit("T-MISS", to: "u1")
        try expectGone(world, id) {
            _ = try world.service().resolve(id: id, resolution: .granted, by: "mei", note: "paid, never credited")
        }
        #expect(try world.lastEvent(id).note?.contains("coins_600 ×1 to u1") == true)
    }

    /// The app took back the second credit itself: revoking the duplicate now would take the
    /// customer's only one.
    @Test func aRevokeOfADuplicateTheAppRevokedMeanwhileQueuesNothing() throws {
        let world = try World("rejudge_revoke")
        let id = try world.item("T-DUP", .duplicateDelivery)
        try world.revokeOne("T-DUP", from: "u2")
        try expectGone(world, id) { _ = try world.service().resolve(id: id, resolution: .revoked, by: "mei", note: nil) }
    }

    /// The app moved the goods to the buyer itself: moving them again would take from an account
    /// that holds nothing.
    @Test func aMoveTheAppMadeMeanwhileQueuesNothing() throws {
        let world = try World("rejudge_move")
        let id = try world.item("T-WRONG", .wrongAccount)
        try world.revokeOne("T-WRONG", from: "u5")
        try world.credit("T-WRONG", to: "u4")
        try expectGone(world, id) { _ = try world.service().resolve(id: id, resolution: .moved, by: "mei", note: nil) }
    }

    /// The refund's goods were taken back by the app: a revoke now takes nothing that is there.
    @Test func aRevokeOfARefundTheAppTookBackMeanwhileQueuesNothing() throws {
        let world = try World("rejudge_refund")
        let id = try world.item("T-REF", .refundedDelivery)
        try world.revokeOne("T-REF", from: "u6")
        try expectGone(world, id) { _ = try world.service().resolve(id: id, resolution: .revoked, by: "mei", note: nil) }
    }

    /// While the finding holds, each action is queued as before, from the finding as judged now.
    @Test func aFindingThatStillHoldsIsDecidedAsBefore() throws {
        let world = try World("rejudge_holds")
        let service = try world.service()
        let grant = try service.resolve(id: try world.item("T-MISS", .missedDelivery), resolution: .granted, by: "mei", note: nil)
        #expect(grant.outbox?.actionDescription == "grant coins_600 ×1 to u1")
        let move = try service.resolve(id: try world.item("T-WRONG", .wrongAccount), resolution: .moved, by: "mei", note: nil)
        #expect(move.outbox?.actionDescription == "move coins_600 ×1 from u5 to u4")
        let revoke = try service.resolve(id: try world.item("T-DUP", .duplicateDelivery), resolution: .revoked, by: "mei", note: nil)
        #expect(revoke.outbox?.action == .revoke && revoke.outbox?.fromUserID == "u2")
    }

    /// A decision that cannot be judged now (an upload of the transaction still being verified)
    /// changes nothing.
    @Test func aDecisionHeldBackByAVerificationChangesNothing() throws {
        let world = try World("rejudge_held")
        let id = try world.item("T-MISS", .missedDelivery)
        try world.credit("T-MISS", to: "u1")
        try world.connection.execute(
            """
            INSERT INTO reconcile.receipt_uploads (id, user_id, kind, payload, claimed_transaction_id)
            VALUES (100, 'u1', 'signed_transaction', 'late', 'T-MISS')
            """)
        try world.connection.execute("INSERT INTO reconcile.upload_verifications (upload_id, state) VALUES (100, 'pending')")
        #expect {
            _ = try world.service().resolve(id: id, resolution: .granted, by: "mei", note: nil)
        } throws: { error in
            if case .notJudgedNow = error as? ReviewError { return true }
            return false
        }
        #expect(try world.status(id) == "open")
        #expect(try world.outboxRows(id) == 0)
    }

    // MARK: Item 1, each entry point

    /// The command line: exit 1 with the reason; the item is auto-resolved.
    @Test func theCommandLineSaysWhyAndExitsOne() async throws {
        let world = try World("rejudge_cli")
        let id = try world.item("T-MISS", .missedDelivery)
        try world.credit("T-MISS", to: "u1")
        let result = try await DeskCommandLineTests.reconcile(
            ["review", "resolve", String(id), "--resolution", "granted", "--by", "mei"],
            environment: ["DATABASE_URL": world.database.url, "RECONCILE_BUNDLE_IDS": Self.bundle], label: "rejudge")
        #expect(result.status == 1)
        #expect(result.err.contains("was not resolved as granted") && result.err.contains("auto-resolved"), "\(result.err)")
        #expect(try world.status(id) == "auto_resolved")
        #expect(try world.outboxRows(id) == 0)
    }

    /// A bulk decision counts such an item as skipped, with its reason, and decides the others.
    @Test func aBulkDecisionSkipsAnItemWhoseFindingIsGone() throws {
        let world = try World("rejudge_bulk")
        let gone = try world.item("T-MISS", .missedDelivery)
        let still = try world.item("T-TOK", .missedDelivery)
        try world.credit("T-MISS", to: "u1")
        var filter = ReviewFilter()
        filter.kinds = [.missedDelivery]
        let outcome = try BulkDecision(filter: filter, person: "mei", approval: .none, judgement: try world.judgement)
            .run(.resolve(.granted), note: "outage", on: world.connection)
        #expect(outcome.decided == 1)
        #expect(outcome.skipped.map(\.0) == [gone])
        #expect(outcome.skipped.first?.1.contains("auto-resolved") == true)
        #expect(try world.status(gone) == "auto_resolved" && world.outboxRows(gone) == 0)
        #expect(try world.status(still) == "resolved" && world.outboxRows(still) == 1)
    }

    /// A policy leaves such an item (it is auto-resolved, not granted).
    @Test func aPolicyLeavesAnItemWhoseFindingIsGone() throws {
        let world = try World("rejudge_policy")
        let id = try world.item("T-MISS", .missedDelivery)
        try world.credit("T-MISS", to: "u1")
        let policies = try PolicyFile.parse("""
            rules:
              - name: small
                when: {kind: [missed_delivery], max_amount: {CNY: 30}}
                decide: granted
                note: small pack
            """)
        let run = try world.connection.query(
            "INSERT INTO reconcile.runs (window_until, environment) VALUES (now(), 'production') RETURNING id"
        )[0].decode(Int64.self, at: 0)
        let outcome = try PolicyEngine(
            file: policies, approval: .none, judgement: try world.judgement, logger: Logger(label: "test")
        ).apply(runID: run, on: world.connection)
        #expect(outcome.total == 0)
        #expect(outcome.left.map(\.0) == [id])
        #expect(try world.status(id) == "auto_resolved" && world.outboxRows(id) == 0)
    }

    /// An approval of a grant whose purchase the app credited meanwhile takes no effect.
    @Test func anApprovalOfAGrantTheAppCreditedMeanwhileQueuesNothing() throws {
        let world = try World("rejudge_approve")
        let threshold = try #require(ApprovalThreshold(parsing: "CNY=648"))
        let id = try world.item("T-TOK", .missedDelivery)
        let waiting = try world.service(approval: threshold).resolve(id: id, resolution: .granted, by: "alice", note: nil)
        #expect(waiting.item.status == .awaitingApproval)
        try world.credit("T-TOK", to: "uploader-1")
        try expectGone(world, id) { _ = try world.service(approval: threshold).approve(id: id, by: "bob") }
    }

    // MARK: Item 5

    /// Alice grants ¥680 to uploader-1 (waiting for approval); the app then maps the purchase's
    /// token to someone-else and a run refreshes the item's target. Bob's approval would grant to
    /// someone-else, "decided by alice": it is refused, nothing is queued, and the item is open
    /// again for a new decision on what is true now.
    @Test func anApprovalWhoseTargetChangedIsSentBack() throws {
        let world = try World("rejudge_target")
        let threshold = try #require(ApprovalThreshold(parsing: "CNY=648"))
        let id = try world.item("T-TOK", .missedDelivery)
        _ = try world.service(approval: threshold).resolve(id: id, resolution: .granted, by: "alice", note: nil)
        try world.connection.execute(
            """
            INSERT INTO reconcile.account_tokens (app_account_token, user_id)
            VALUES ('0b6e2c0e-59a4-4bd5-8f59-0d8f3e0a9a11', 'someone-else')
            """)
        try world.judge()
        #expect {
            _ = try world.service(approval: threshold).approve(id: id, by: "bob")
        } throws: { error in
            guard case .approvalOutdated(_, let was, let now) = error as? ReviewError else { return false }
            return was == "grant coins_600 ×1 to uploader-1" && now == "grant coins_600 ×1 to someone-else"
        }
        #expect(try world.status(id) == "open")
        #expect(try world.outboxRows(id) == 0)
        #expect(try world.lastEvent(id).note?.contains("approval refused") == true)
        // Decided again on what is true now, it waits for approval of the new target.
        let again = try world.service(approval: threshold).resolve(id: id, resolution: .granted, by: "alice", note: nil)
        #expect(again.item.status == .awaitingApproval)
        let approved = try world.service(approval: threshold).approve(id: id, by: "bob")
        #expect(approved.outbox?.actionDescription == "grant coins_600 ×1 to someone-else")
    }

    /// The item page sends the action it showed; when the action drafted now is another, nothing
    /// changes.
    @Test func aDecisionOnAnActionThePageNoLongerShowsChangesNothing() throws {
        let world = try World("rejudge_seen")
        let id = try world.item("T-TOK", .missedDelivery)
        let shown = try #require(try ReviewQueue(connection: world.connection).detail(id: id).proposedActions[.granted])
        #expect(shown.description == "grant coins_600 ×1 to uploader-1")
        try world.connection.execute(
            """
            INSERT INTO reconcile.account_tokens (app_account_token, user_id)
            VALUES ('0b6e2c0e-59a4-4bd5-8f59-0d8f3e0a9a11', 'someone-else')
            """)
        #expect {
            _ = try world.service().resolve(id: id, resolution: .granted, by: "mei", note: nil, seen: shown)
        } throws: { error in
            guard case .actionChanged(_, _, let now) = error as? ReviewError else { return false }
            return now == "grant coins_600 ×1 to someone-else"
        }
        #expect(try world.status(id) == "open" && world.outboxRows(id) == 0)
    }

    // MARK: Item 6

    /// `granted` on a duplicate or a refunded delivery is refused with the resolutions the kind
    /// allows, by a person and in a bulk decision; nothing is queued.
    @Test func aResolutionTheKindDoesNotAllowIsRefused() throws {
        let world = try World("rejudge_kinds")
        for (transaction, kind) in [("T-DUP", FindingKind.duplicateDelivery), ("T-REF", .refundedDelivery)] {
            let id = try world.item(transaction, kind)
            #expect {
                _ = try world.service().resolve(id: id, resolution: .granted, by: "mei", note: nil)
            } throws: { error in
                guard case .resolutionNotAllowed(_, let refused, .granted, let allowed) = error as? ReviewError else {
                    return false
                }
                return refused == kind && allowed == [.revoked, .noAction]
                    && "\(error)".contains("can be resolved as revoked, no_action")
            }
            #expect(try world.status(id) == "open" && world.outboxRows(id) == 0)
        }
        let outcome = try BulkDecision(filter: ReviewFilter(), person: "mei", approval: .none, judgement: try world.judgement)
            .run(.resolve(.granted), note: "everything", on: world.connection)
        #expect(outcome.decided == 3)  // the two missed deliveries, and the wrong account's buyer
        #expect(Set(outcome.skipped.map(\.0)) == Set([
            try world.item("T-DUP", .duplicateDelivery), try world.item("T-REF", .refundedDelivery),
        ]))
        #expect(try world.connection.query("SELECT count(*)::int FROM reconcile.action_outbox")[0].decode(Int.self, at: 0) == 3)
    }

    /// Every kind allows `no_action`, and each allowed action is one its suggested action fits.
    @Test func everyKindAllowsNoActionAndItsSuggestedAction() {
        for kind in FindingKind.allCases {
            #expect(kind.allowedResolutions.contains(.noAction))
            let fitting: [SuggestedAction: Resolution] = [.grant: .granted, .revoke: .revoked, .move: .moved]
            if let resolution = fitting[kind.suggestedAction] {
                #expect(kind.allowedResolutions.contains(resolution), "\(kind)")
            }
        }
    }
}
