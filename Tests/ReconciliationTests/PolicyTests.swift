import Foundation
import Logging
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// Issue 27 item 2: policies decide exactly the routine items they describe and nothing else (an
/// item just outside each condition stays open), their limits hold however many processes decide
/// at once, and they never decide an item a person claimed or decided.
@Suite("Policies")
struct PolicyTests {
    /// An item planted as the diff would leave it, with the facts a policy reads: Apple's row (its
    /// environment), the source that confirmed it (a claim, or a Server API lookup), the buyer's
    /// basis in the evidence, and the item's value.
    struct Planted {
        var transaction: String
        var user: String?
        var kind = "missed_delivery"
        var product = "coins60"
        var amountMilli: Int64? = 30_000
        var currency: String? = "CNY"
        var environment = "Production"
        var source = "jws"
        var basis = "app_account_token"
        var status = "open"
        var assignee: String?
        /// For a wrong_account item: the account it credited.
        var credited: String?
    }

    static func database(_ name: String, runs: Int = 2) throws -> (TestDatabase, Connection) {
        let (database, connection) = try TestDatabase.migrated(name)
        for _ in 0..<runs {
            try connection.execute(
                "INSERT INTO reconcile.runs (window_until, environment, status) VALUES (now(), 'production', 'completed')")
        }
        return (database, connection)
    }

    @discardableResult
    static func plant(_ item: Planted, on connection: Connection) throws -> Int64 {
        try connection.execute(
            """
            INSERT INTO reconcile.apple_transactions
                (transaction_id, original_transaction_id, product_id, bundle_id, environment, purchase_date, price_milli,
                 currency, source)
            VALUES ($1, $1, $2, 'com.example.game', $3, now() - interval '2 days', $4, $5, 'verify_receipt')
            """, [item.transaction, item.product, item.environment, item.amountMilli, item.currency])
        if item.source == "server_api" {
            try connection.execute(
                "INSERT INTO reconcile.transaction_lookups (transaction_id, result) VALUES ($1, 'found')", [item.transaction])
        } else {
            try connection.execute(
                """
                INSERT INTO reconcile.transaction_claims (transaction_id, upload_id, user_id, source)
                VALUES ($1, (SELECT coalesce(max(upload_id), 0) + 1 FROM reconcile.transaction_claims), $2, $3)
                """, [item.transaction, item.user ?? "someone", item.source])
        }
        let action = ["missed_delivery": "grant", "wrong_account": "move", "refunded_delivery": "revoke",
                      "duplicate_delivery": "revoke"][item.kind] ?? "investigate"
        return try connection.query(
            """
            INSERT INTO reconcile.review_items
                (fingerprint, kind, severity, status, transaction_id, original_transaction_id, user_id, product_id,
                 suggested_action, evidence, first_seen_run, last_seen_run, amount_milli, currency, assignee,
                 resolution, resolved_by, resolved_at, grant_to_user_id, grant_product_id, grant_quantity,
                 revoke_from_user_id, revoke_product_id, revoke_quantity)
            VALUES ($1 || ':' || $2, $1, 'high', $3, $2, $2, $4, $5, $6,
                    jsonb_build_object('buyer', jsonb_build_object('user_id', $4::text, 'basis', $7::text, 'uploaders', 1)),
                    1, 1, $8, $9, $10,
                    CASE WHEN $3 = 'resolved' THEN 'no_action' END, CASE WHEN $3 IN ('resolved', 'dismissed') THEN 'mei' END,
                    CASE WHEN $3 IN ('resolved', 'dismissed') THEN now() END,
                    $4, $5, 1, $11::text, CASE WHEN $11::text IS NOT NULL THEN $5 END,
                    CASE WHEN $11::text IS NOT NULL THEN 1 END)
            RETURNING id
            """,
            [item.kind, item.transaction, item.status, item.user, item.product, action, item.basis, item.amountMilli,
             item.currency, item.assignee, item.credited]
        )[0].decode(Int64.self, at: 0)
    }

    static func engine(_ yaml: String) throws -> PolicyEngine {
        PolicyEngine(file: try PolicyFile.parse(yaml), approval: .none, judgement: .asStored, logger: Logger(label: "test"))
    }

    /// Item transaction ids by status, and the actor that decided them.
    static func states(_ connection: Connection) throws -> [String: String] {
        Dictionary(uniqueKeysWithValues: try connection.query(
            "SELECT transaction_id, status || coalesce(' ' || resolved_by, '') FROM reconcile.review_items"
        ).map { (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1)) })
    }

    static let routine = """
        rules:
          - name: routine
            when:
              kind: [missed_delivery]
              product: [coins60]
              max_amount: {CNY: 30}
              environment: production
              sources: [server_api, jws]
              buyer_basis: [app_account_token]
              no_open: [wrong_account]
            decide: granted
            note: routine small pack confirmed by Apple
        """

    /// Every condition of the routine rule, each with an item just outside it: only the items inside
    /// all of them are granted, as policy:routine, with the rule's note, one event (with its run)
    /// and one outbox row each; run again, nothing changes.
    @Test func theRoutineRuleGrantsExactlyItsItems() throws {
        let (_, connection) = try Self.database("policy_routine")
        let outside: [Planted] = [
            Planted(transaction: "OUT-KIND", user: "u1", kind: "duplicate_delivery"),
            Planted(transaction: "OUT-PRODUCT", user: "u2", product: "coins120"),
            Planted(transaction: "OUT-AMOUNT", user: "u3", amountMilli: 30_010),
            Planted(transaction: "OUT-CURRENCY", user: "u4", amountMilli: 1_000, currency: "USD"),
            Planted(transaction: "OUT-UNPRICED", user: "u5", amountMilli: nil, currency: nil),
            Planted(transaction: "OUT-ENVIRONMENT", user: "u6", environment: "Sandbox"),
            Planted(transaction: "OUT-SOURCE", user: "u7", source: "verify_receipt"),
            Planted(transaction: "OUT-BASIS", user: "u8", basis: "uploader"),
            Planted(transaction: "OUT-OPEN", user: "u9"),
            Planted(transaction: "WRONG-U9", user: "u-other", kind: "wrong_account", credited: "u9"),
            Planted(transaction: "OUT-CLAIMED", user: "u10", status: "in_review", assignee: "tom"),
            Planted(transaction: "OUT-REOPENED", user: "u11", assignee: "tom"),
            Planted(transaction: "OUT-DECIDED", user: "u12", status: "resolved", assignee: "mei"),
            Planted(transaction: "OUT-NO-ACCOUNT", user: nil),
        ]
        let inside: [Planted] = [
            Planted(transaction: "IN-JWS", user: "u20"),
            Planted(transaction: "IN-SERVER-API", user: "u21", amountMilli: 6_000, source: "server_api"),
            // Its account's wrong_account item is decided: no longer open.
            Planted(transaction: "IN-OTHER-DECIDED", user: "u22"),
            Planted(transaction: "WRONG-U22", user: "u-other2", kind: "wrong_account", status: "dismissed", credited: "u22"),
        ]
        for item in outside + inside { try Self.plant(item, on: connection) }
        let before = try Self.states(connection)
        let engine = try Self.engine(Self.routine)

        let preview = try engine.preview(on: connection)
        let previewed = try Set(preview.map { id in try Self.transaction(id.id, connection) })
        #expect(previewed == ["IN-JWS", "IN-SERVER-API", "IN-OTHER-DECIDED"])
        #expect(preview.allSatisfy { $0.held == nil && $0.rule == "routine" && $0.decision == .resolve(.granted) })
        #expect(try Self.states(connection) == before, "a preview decides nothing")

        let outcome = try engine.apply(runID: 2, on: connection)
        #expect(outcome.total == 3 && outcome.left.isEmpty, "\(outcome.left)")
        var expected = before
        for transaction in ["IN-JWS", "IN-SERVER-API", "IN-OTHER-DECIDED"] { expected[transaction] = "resolved policy:routine" }
        #expect(try Self.states(connection) == expected)
        let decisions = try connection.query(
            """
            SELECT count(*) FILTER (WHERE e.run_id = 2 AND e.note = 'routine small pack confirmed by Apple'
                                      AND e.to_status = 'resolved'),
                   (SELECT count(*) FROM reconcile.action_outbox o
                     WHERE o.decided_by = 'policy:routine' AND o.action = 'grant' AND o.note = 'routine small pack confirmed by Apple')
              FROM reconcile.review_events e WHERE e.actor = 'policy:routine'
            """)[0]
        #expect(try decisions.decode(Int.self, at: 0) == 3 && decisions.decode(Int.self, at: 1) == 3)

        #expect(try engine.apply(runID: 2, on: connection).total == 0)
        #expect(try connection.query("SELECT count(*) FROM reconcile.review_events WHERE actor LIKE 'policy:%'")[0]
            .decode(Int.self, at: 0) == 3, "run again, nothing is decided twice")
        #expect(try PolicyTally.forRun(2, file: engine.file, on: connection)
            == [PolicyTally(rule: "routine", decided: 3, amounts: [Money(milli: 66_000, currency: "CNY")])])
    }

    static func transaction(_ id: Int64, _ connection: Connection) throws -> String {
        try connection.query("SELECT transaction_id FROM reconcile.review_items WHERE id = $1", [id])[0]
            .decode(String.self, at: 0)
    }

    /// The first rule that takes an item decides it, and a later rule does not see it; an item over
    /// its rule's limit is left to people, not passed on.
    @Test func theFirstRuleThatTakesAnItemDecidesIt() throws {
        let (_, connection) = try Self.database("policy_order")
        try Self.plant(Planted(transaction: "SMALL", user: "u1", amountMilli: 6_000), on: connection)
        try Self.plant(Planted(transaction: "LARGE", user: "u2", amountMilli: 60_000), on: connection)
        try Self.plant(Planted(transaction: "CAPPED", user: "u3", amountMilli: 1_000), on: connection)
        let engine = try Self.engine("""
            rules:
              - name: small
                when: {kind: missed_delivery, max_amount: {CNY: 10}, product: [coins60]}
                limits: {per_run: {items: 1}}
                decide: granted
                note: small
              - name: everything-else
                when: {kind: missed_delivery}
                decide: no_action
                note: looked at by a person later
            """)
        let preview = try engine.preview(on: connection)
        #expect(try preview.map { "\(try Self.transaction($0.id, connection)) \($0.rule) \($0.held == nil)" } == [
            "SMALL small true", "CAPPED small false", "LARGE everything-else true",
        ])
        _ = try engine.apply(runID: 2, on: connection)
        #expect(try Self.states(connection) == [
            "SMALL": "resolved policy:small", "CAPPED": "open", "LARGE": "resolved policy:everything-else",
        ])
    }

    /// Items and value per account per day, and per run: the items over a limit are left open, the
    /// preview says which, and a second run may decide what only the first run's limit held back.
    @Test func limitsHoldPerAccountAndPerRun() throws {
        let (_, connection) = try Self.database("policy_limits", runs: 3)
        for (transaction, user, amount, currency) in [
            ("A1", "ua", 30_000, "CNY"), ("A2", "ua", 30_000, "CNY"), ("A3", "ua", 6_000, "CNY"), ("A4", "ua", 6_000, "CNY"),
            ("B1", "ub", 6_000, "CNY"), ("B2", "ub", 6_000, "CNY"), ("C1", "uc", 6_000, "CNY"), ("D1", "ud", 1_000, "USD"),
        ] as [(String, String, Int64, String)] {
            try Self.plant(Planted(transaction: transaction, user: user, amountMilli: amount, currency: currency), on: connection)
        }
        let engine = try Self.engine("""
            rules:
              - name: capped
                when: {kind: missed_delivery}
                limits:
                  per_account_per_day: {items: 2, amount: {CNY: 50}}
                  per_run: {items: 4}
                decide: granted
                note: capped
            """)
        let preview = try engine.preview(on: connection)
        let wouldDecide = try Set(preview.filter { $0.held == nil }.map { try Self.transaction($0.id, connection) })
        #expect(wouldDecide == ["A1", "A3", "B1", "B2"])
        let outcome = try engine.apply(runID: 2, on: connection)
        let decided = try Set(Self.states(connection).filter { $0.value == "resolved policy:capped" }.keys)
        #expect(decided == wouldDecide, "the preview says what a run decides")
        #expect(Set(try outcome.left.map { try Self.transaction($0.id, connection) }) == ["A2", "A4", "C1", "D1"])
        #expect(outcome.left.first { $0.reason.contains("per_run") } != nil)

        // The next run: a new run's limit, the same 24 hours for each account.
        _ = try engine.apply(runID: 3, on: connection)
        let second = try Set(Self.states(connection).filter { $0.value == "resolved policy:capped" }.keys)
        #expect(second == wouldDecide.union(["C1"]))
    }

    /// Two runs deciding at once (two sessions, as two processes are): each item once, and no
    /// account over its limit of three items or 20 CNY a day, whichever process took which item.
    @Test func limitsHoldUnderTwoRunsAtOnce() async throws {
        let (database, connection) = try Self.database("policy_concurrent", runs: 3)
        for account in 0..<5 {
            for index in 0..<12 {
                try Self.plant(
                    Planted(transaction: "T\(account)-\(index)", user: "acct-\(account)", amountMilli: 6_000), on: connection)
            }
        }
        let engine = try Self.engine("""
            rules:
              - name: three-a-day
                when: {kind: missed_delivery}
                limits:
                  per_account_per_day: {items: 3, amount: {CNY: 20}}
                decide: granted
                note: three a day
            """)
        // Each run's own session, opened before they start: each is used by its task alone.
        struct Session: @unchecked Sendable { let connection: Connection }
        let sessions = [Session(connection: try database.connect()), Session(connection: try database.connect())]
        async let first = Task.detached { try engine.apply(runID: 2, on: sessions[0].connection).total }.value
        async let second = Task.detached { try engine.apply(runID: 3, on: sessions[1].connection).total }.value
        let (a, b) = try await (first, second)
        #expect(a + b == 15)
        let perAccount = try connection.query(
            """
            SELECT i.user_id, count(*)::int FROM reconcile.review_items i
             WHERE i.resolved_by = 'policy:three-a-day' GROUP BY i.user_id ORDER BY i.user_id
            """).map { "\(try $0.decode(String.self, at: 0)) \(try $0.decode(Int.self, at: 1))" }
        #expect(perAccount == (0..<5).map { "acct-\($0) 3" })
        let written = try connection.query(
            """
            SELECT (SELECT count(*) FROM reconcile.review_events WHERE actor = 'policy:three-a-day')::int,
                   (SELECT count(*) FROM reconcile.action_outbox WHERE decided_by = 'policy:three-a-day')::int
            """)[0]
        #expect(try written.decode(Int.self, at: 0) == 15 && written.decode(Int.self, at: 1) == 15)
    }

    /// An item a person claims, or decides, between the policy's match and its decision is left as
    /// the person has it: the check runs on the locked item in the decision's own transaction. A
    /// grant the evidence cannot make (no buyer) is left too, with its reason.
    @Test func anItemAPersonTookMeanwhileIsLeftToThem() throws {
        let (_, connection) = try Self.database("policy_claimed")
        let claimed = try Self.plant(Planted(transaction: "CLAIMED", user: "u1"), on: connection)
        let decided = try Self.plant(Planted(transaction: "DECIDED", user: "u2"), on: connection)
        let engine = try Self.engine(Self.routine.replacingOccurrences(of: "      no_open: [wrong_account]\n", with: ""))
        #expect(try engine.preview(on: connection).map(\.id) == [claimed, decided])

        let service = ReviewDecisions(connection: connection, approval: .none, judgement: .asStored)
        _ = try service.claim(id: claimed, by: "tom")
        _ = try service.resolve(id: decided, resolution: .noAction, by: "mei", note: "test purchase")
        let rule = engine.file.rules[0]
        #expect(throws: PolicyEngine.Hold.self) { try engine.decide(claimed, by: rule, runID: 2, on: connection) }
        #expect(throws: PolicyEngine.Hold.self) { try engine.decide(decided, by: rule, runID: 2, on: connection) }
        #expect(try Self.states(connection) == ["CLAIMED": "in_review", "DECIDED": "resolved mei"])

        let buyerless = try Self.plant(Planted(transaction: "NO-BUYER", user: "u3"), on: connection)
        try connection.execute("UPDATE reconcile.review_items SET grant_to_user_id = NULL WHERE id = $1", [buyerless])
        let outcome = try engine.apply(runID: 2, on: connection)
        #expect(outcome.total == 0 && outcome.left.map(\.id) == [buyerless])
        #expect(outcome.left.first?.reason.contains("the buyer is unknown") == true)
    }

    /// A policy's decision above RECONCILE_APPROVAL_ABOVE waits for a person, as a person's does:
    /// no outbox row until approved. An approver who rejects it sends the item back open and
    /// unclaimed, and no policy takes it again: it is the people's now.
    @Test func aPolicysDecisionAboveTheValueWaitsAndARejectedOneIsLeftToPeople() throws {
        let (_, connection) = try Self.database("policy_approval")
        let small = try Self.plant(Planted(transaction: "SMALL", user: "u1", amountMilli: 6_000), on: connection)
        let large = try Self.plant(Planted(transaction: "LARGE", user: "u2", amountMilli: 30_000), on: connection)
        let threshold = try #require(ApprovalThreshold(parsing: "CNY=10"))
        let engine = PolicyEngine(file: try PolicyFile.parse(Self.routine), approval: threshold, judgement: .asStored, logger: Logger(label: "test"))
        #expect(try engine.apply(runID: 2, on: connection).total == 2)
        #expect(try Self.states(connection) == ["SMALL": "resolved policy:routine", "LARGE": "awaiting_approval"])
        let outbox = try connection.query("SELECT review_item_id FROM reconcile.action_outbox")
            .map { try $0.decode(Int64.self, at: 0) }
        #expect(outbox == [small], "nothing reaches the outbox above the value until a person approves")

        let service = ReviewDecisions(connection: connection, approval: threshold, judgement: .asStored)
        _ = try service.reject(id: large, by: "mei", note: "this account was refunded twice")
        #expect(try Self.states(connection)["LARGE"] == "open")
        #expect(try engine.preview(on: connection).isEmpty)
        #expect(try engine.apply(runID: 2, on: connection).total == 0)
        #expect(try Self.states(connection)["LARGE"] == "open", "a rejected decision is the people's to make")
    }
}
