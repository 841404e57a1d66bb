import Foundation
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// SPEC section 5 on quantities over several ledger rows (issue 36, item 13): a duplicate is two or
/// more rows totalling more than Apple's quantity (a non-consumable: two or more rows for one
/// original); rows that make up Apple's quantity are no finding (a correction credited as a second
/// row, such as the job's own quantity_mismatch grant carried out); too few units over several rows
/// are a quantity_mismatch. Over DifferTests' world, with transactions of its own.
@Suite("Differ: quantities over several ledger rows")
struct QuantityOverRowsTests {
    /// What a transaction's item says a decision moves.
    struct Item: Equatable, CustomStringConvertible {
        var kind: String
        var amountMilli: Int64?
        var grant: Int?
        var revoke: Int?
        var revokeFrom: String?
        var description: String {
            "\(kind) ¥\(amountMilli.map { String($0) } ?? "-") grant \(grant.map(String.init) ?? "-") "
                + "revoke \(revoke.map(String.init) ?? "-") from \(revokeFrom ?? "-")"
        }
    }

    /// A transaction of `product` × `quantity` (coin42: ¥6.00 a unit in the catalogue; unlock: a
    /// non-consumable at ¥120.00) sold to u1 and carried by u1's verified upload, credited as `rows`
    /// say (account, units), in that order.
    static func plant(
        _ id: String, original: String? = nil, product: String = "coin42", quantity: Int,
        rows: [(String, Int)], in world: DifferTests
    ) throws {
        let old = world.now.addingTimeInterval(-2 * 86_400)
        try world.connection.execute(
            """
            INSERT INTO reconcile.apple_transactions
                (transaction_id, original_transaction_id, product_id, bundle_id, environment, quantity,
                 purchase_date, source, signed_date)
            VALUES ($1, $2, $3, 'com.hncs.szj', 'Production', $4, $5, 'jws', $5)
            """, [id, original ?? id, product, quantity, old])
        try world.connection.execute(
            """
            INSERT INTO reconcile.transaction_claims (transaction_id, upload_id, user_id, source, run_id)
            VALUES ($1, 1, 'u1', 'jws', 1)
            """, [id])
        for (index, (user, units)) in rows.enumerated() {
            try world.connection.execute(
                """
                INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at)
                VALUES ($1, $2, $3, $4, $5)
                """, [id, user, product, units, old.addingTimeInterval(Double(index + 1) * 60)])
        }
    }

    /// The open items of `transactions` after a run, by transaction.
    static func items(_ transactions: [String], in world: DifferTests) throws -> [String: [Item]] {
        _ = try world.diff()
        let rows = try world.connection.query(
            """
            SELECT transaction_id, kind, amount_milli, grant_quantity, revoke_quantity, revoke_from_user_id
              FROM reconcile.review_items
             WHERE transaction_id = ANY($1) AND status = 'open' ORDER BY transaction_id, kind
            """, [transactions])
        var found: [String: [Item]] = [:]
        for row in rows {
            let kind = try row.decode(String.self, at: 1)
            found[try row.decode(String.self, at: 0), default: []].append(Item(
                kind: kind, amountMilli: try row.decode(Int64?.self, at: 2),
                grant: kind == "quantity_mismatch" ? try row.decode(Int?.self, at: 3) : nil,
                revoke: try row.decode(Int?.self, at: 4), revokeFrom: try row.decode(String?.self, at: 5)))
        }
        return found
    }

    @Test func rowsThatMakeUpApplesQuantityAreNoFindingAndTooManyOrTooFewAre() throws {
        let world = try DifferTests()
        try Self.plant("t-c12", quantity: 3, rows: [("u1", 1), ("u1", 2)], in: world)
        try Self.plant("t-c111", quantity: 3, rows: [("u1", 1), ("u1", 1), ("u1", 1)], in: world)
        try Self.plant("t-c11", quantity: 3, rows: [("u1", 1), ("u1", 1)], in: world)
        try Self.plant("t-c22", quantity: 3, rows: [("u1", 2), ("u1", 2)], in: world)
        try Self.plant("t-c1x1", quantity: 1, rows: [("u1", 1), ("u1", 1)], in: world)
        try Self.plant("t-c33", quantity: 3, rows: [("u1", 3), ("u1", 3)], in: world)
        // Five units too many, the latest row another account's single unit: the revoke takes back
        // what that account holds, never more (the rest is judged again once it is gone).
        try Self.plant("t-c51", quantity: 1, rows: [("u1", 5), ("u2", 1)], in: world)
        // A non-consumable credited twice, once for its purchase and once for a restore of it,
        // and one credited twice for the same transaction.
        try Self.plant("t-nc", product: "unlock", quantity: 1, rows: [("u1", 1)], in: world)
        try Self.plant("t-ncr", original: "t-nc", product: "unlock", quantity: 1, rows: [("u1", 1)], in: world)
        try Self.plant("t-nc2", product: "unlock", quantity: 1, rows: [("u1", 1), ("u1", 1)], in: world)

        let found = try Self.items(
            ["t-c12", "t-c111", "t-c11", "t-c22", "t-c1x1", "t-c33", "t-c51", "t-nc", "t-ncr", "t-nc2"], in: world)
        #expect(found["t-c12"] == nil, "1 + 2 rows for 3 units: \(found["t-c12"] ?? [])")
        #expect(found["t-c111"] == nil, "1 + 1 + 1 rows for 3 units: \(found["t-c111"] ?? [])")
        #expect(found["t-c11"] == [Item(kind: "quantity_mismatch", amountMilli: 6000, grant: 1, revoke: 0, revokeFrom: "u1")])
        #expect(found["t-c22"] == [Item(kind: "duplicate_delivery", amountMilli: 6000, grant: nil, revoke: 1, revokeFrom: "u1")])
        #expect(found["t-c1x1"] == [Item(kind: "duplicate_delivery", amountMilli: 6000, grant: nil, revoke: 1, revokeFrom: "u1")])
        #expect(found["t-c33"] == [Item(kind: "duplicate_delivery", amountMilli: 18000, grant: nil, revoke: 3, revokeFrom: "u1")])
        #expect(found["t-c51"]?.map(\.kind) == ["duplicate_delivery", "wrong_account"])
        #expect(found["t-c51"]?.first == Item(kind: "duplicate_delivery", amountMilli: 30000, grant: nil, revoke: 1, revokeFrom: "u2"))
        #expect(found["t-nc"] == [Item(kind: "duplicate_delivery", amountMilli: 12000, grant: nil, revoke: 1, revokeFrom: "u1")])
        #expect(found["t-ncr"] == nil)
        #expect(found["t-nc2"] == [Item(kind: "duplicate_delivery", amountMilli: 12000, grant: nil, revoke: 1, revokeFrom: "u1")])
    }

    /// The issue's case: Apple sold 3 units, the app credited 1; "grant ×2" was queued and carried
    /// out as a second ledger row. The next run opens nothing: the ledger holds Apple's 3 units.
    @Test func carryingOutTheJobsOwnQuantityGrantAsASecondRowIsNoDuplicate() throws {
        let world = try DifferTests()
        try Self.plant("t-c3", quantity: 3, rows: [("u1", 1)], in: world)
        let before = try Self.items(["t-c3"], in: world)
        #expect(before["t-c3"] == [Item(kind: "quantity_mismatch", amountMilli: 12000, grant: 2, revoke: 0, revokeFrom: "u1")])
        let id = try world.connection.query(
            "SELECT id FROM reconcile.review_items WHERE fingerprint = 'quantity_mismatch:t-c3'")[0].decode(Int64.self, at: 0)
        let outcome = try ReviewDecisions(connection: world.connection, approval: .none, judgement: .asStored)
            .resolve(id: id, resolution: .granted, by: "mei", note: "short delivery")
        let grant = try #require(outcome.outbox)
        #expect(grant.action == .grant && grant.quantity == 2 && grant.toUserID == "u1")
        try world.connection.execute(
            """
            INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at)
            VALUES ('t-c3', $1, $2, $3, now())
            """, [grant.toUserID, grant.productID, grant.quantity])
        let after = try Self.items(["t-c3"], in: world)
        #expect(after["t-c3"] == nil, "\(after["t-c3"] ?? [])")
        // What the duplicate's revoke would take had the grant been carried out twice: the extra 2.
        try world.connection.execute(
            """
            INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at)
            VALUES ('t-c3', $1, $2, $3, now())
            """, [grant.toUserID, grant.productID, grant.quantity])
        let twice = try Self.items(["t-c3"], in: world)
        #expect(twice["t-c3"] == [Item(kind: "duplicate_delivery", amountMilli: 12000, grant: nil, revoke: 2, revokeFrom: "u1")])
    }
}
