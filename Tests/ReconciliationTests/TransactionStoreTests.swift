import AppStore
import Foundation
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// The white table's merge (sql/transactions/upsert_staged.sql, issue 36 item 12): newer Apple data
/// wins, and at an equal signedDate a fixed rule decides (a revoked row over an unrevoked one, then
/// a total order), so every arrival order, one row at a time or in one batch, stores the same row.
@Suite("TransactionStore: the same row whatever the arrival order")
struct TransactionStoreTests {
    let database: TestDatabase
    let connection: Connection
    let run: Int64

    init() throws {
        (database, connection) = try TestDatabase.migrated("transaction_store")
        run = try connection.query(
            "INSERT INTO reconcile.runs (window_until, environment) VALUES (now(), 'production') RETURNING id"
        )[0].decode(Int64.self, at: 0)
    }

    static let purchased = Date(timeIntervalSince1970: 1_780_000_000)
    static let signed = purchased.addingTimeInterval(86_400)
    static let refunded = signed.addingTimeInterval(-30)

    /// A 3-pack of coins as a source tells it.
    static func record(
        signed: Date?, source: TransactionSource, revoked: Date? = nil, type: String? = nil, percentage: Int? = nil,
        price: Int64? = nil
    ) -> AppleTransactionRecord {
        AppleTransactionRecord(
            transactionID: "t", originalTransactionID: "t", productID: "coins3",
            productType: source == .jws ? "consumable" : nil, bundleID: "com.hncs.szj", environment: .production,
            quantity: 3, purchaseDate: purchased, revocationDate: revoked, revocationReason: revoked == nil ? nil : 0,
            ownershipType: source == .jws ? "PURCHASED" : nil, priceMilli: price, currency: price == nil ? nil : "CNY",
            storefront: source == .jws ? "CHN" : nil, revocationType: type, revocationPercentage: percentage,
            appTransactionID: source == .jws ? "705" : nil, signedDate: signed, source: source)
    }

    /// A receipt created before the refund and one after, both in the same second; Apple's JWS of
    /// the refund signed in that second too (its prorated share), and an older JWS of the purchase
    /// (the only one with the price).
    static let sources: [AppleTransactionRecord] = [
        record(signed: signed, source: .localReceipt),
        record(signed: signed, source: .localReceipt, revoked: refunded),
        record(signed: signed, source: .jws, revoked: refunded, type: "REFUND_PRORATED", percentage: 33_333),
        record(signed: purchased, source: .jws, price: 90_000),
    ]

    /// Every stored column but the bookkeeping ones, as JSON, of each transaction whose id starts
    /// with `prefix`.
    func stored(_ prefix: String) throws -> [String: String] {
        Dictionary(uniqueKeysWithValues: try connection.query(
            """
            SELECT transaction_id,
                   (to_jsonb(a) - 'transaction_id' - 'first_seen_run' - 'last_seen_run' - 'first_seen_at'
                        - 'last_seen_at')::text
              FROM reconcile.apple_transactions a WHERE transaction_id LIKE $1 || '%'
            """, [prefix]
        ).map { (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1)) })
    }

    /// Stores `records` under transaction id `id`, in `batches` (each one upsert).
    func apply(_ batches: [[AppleTransactionRecord]], as id: String) throws {
        for batch in batches {
            try connection.transaction {
                try TransactionStore.upsert(
                    batch.map { record in
                        var record = record
                        record.transactionID = id
                        return (record, nil)
                    }, runID: run, on: connection)
            }
        }
    }

    static func permutations<T>(_ items: [T]) -> [[T]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { index -> [[T]] in
            var rest = items
            let first = rest.remove(at: index)
            return permutations(rest).map { [first] + $0 }
        }
    }

    @Test func aTieOnSignedDateEndsTheSameWhateverTheArrivalOrder() throws {
        var count = 0
        for order in Self.permutations(Self.sources) {
            // One at a time (a chain of nights), all in one batch (a whole-history run), and split.
            try apply(order.map { [$0] }, as: "t-\(count)-one")
            try apply([order], as: "t-\(count)-all")
            try apply([Array(order.prefix(2)), Array(order.suffix(2))], as: "t-\(count)-split")
            count += 1
        }
        let rows = try stored("t-")
        #expect(rows.count == 24 * 3)
        let distinct = Set(rows.values)
        #expect(distinct.count == 1, "\(distinct.sorted().joined(separator: "\n"))")
        let row = try #require(try connection.queryFirst(
            """
            SELECT revocation_date, revocation_type, revocation_percentage, source, price_milli, currency,
                   product_type, storefront, app_transaction_id, signed_date
              FROM reconcile.apple_transactions WHERE transaction_id = 't-0-one'
            """))
        // Revoked (a revocation wins a tie), as Apple's JWS of the refund says (it says the most of
        // the three signed in that second), with the price only the older JWS carried.
        #expect(try row["revocation_date", as: Date?.self] == Self.refunded)
        #expect(try row["revocation_type", as: String?.self] == "REFUND_PRORATED")
        #expect(try row["revocation_percentage", as: Int?.self] == 33_333)
        #expect(try row["source", as: String.self] == "jws")
        #expect(try row["price_milli", as: Int64?.self] == 90_000)
        #expect(try row["currency", as: String?.self] == "CNY")
        #expect(try row["product_type", as: String?.self] == "consumable")
        #expect(try row["storefront", as: String?.self] == "CHN")
        #expect(try row["app_transaction_id", as: String?.self] == "705")
        #expect(try row["signed_date", as: Date?.self] == Self.signed)
    }

    /// Google Play: one purchase's `purchaseData`, signed at its purchase time, uploaded while the
    /// payment was pending, once paid, and once the app acknowledged it: the three tie on every
    /// date, and the later state wins in every arrival order, one at a time or in one batch (a
    /// whole-history run kept the pending copy once; found by the multi-night world).
    @Test func aPaidAcknowledgedPlayPurchaseWinsOverItsPendingCopyWhateverTheArrivalOrder() throws {
        func copy(pending: Bool, acknowledged: Bool) -> AppleTransactionRecord {
            var record = Self.record(signed: Self.purchased, source: .playPurchase)
            record.store = .googlePlay
            record.bundleID = "com.hncs.szj.android"
            record.pending = pending
            record.acknowledged = acknowledged
            return record
        }
        let copies = [
            copy(pending: true, acknowledged: false), copy(pending: false, acknowledged: false),
            copy(pending: false, acknowledged: true),
        ]
        var count = 0
        for order in Self.permutations(copies) {
            try apply(order.map { [$0] }, as: "p-\(count)-one")
            try apply([order], as: "p-\(count)-all")
            count += 1
        }
        let rows = try connection.query(
            "SELECT DISTINCT pending, acknowledged FROM reconcile.apple_transactions WHERE transaction_id LIKE 'p-%'")
        #expect(rows.count == 1)
        #expect(try rows.first?.decode(Bool.self, at: 0) == false)
        #expect(try rows.first?.decode(Bool?.self, at: 1) == true)
        #expect(try stored("p-").count == 12)
    }

    /// Two receipts of the same second, unrevoked and revoked, in either order: revoked; the same
    /// without a signedDate at all.
    @Test func twoReceiptsOfOneSecondEndRevokedInEitherOrder() throws {
        for signed in [Self.signed, nil] as [Date?] {
            let before = Self.record(signed: signed, source: .verifyReceipt)
            let after = Self.record(signed: signed, source: .verifyReceipt, revoked: Self.refunded)
            let tag = signed == nil ? "n" : "s"
            try apply([[before], [after]], as: "r\(tag)-1")
            try apply([[after], [before]], as: "r\(tag)-2")
            try apply([[before, after]], as: "r\(tag)-3")
            try apply([[after, before]], as: "r\(tag)-4")
            let rows = try stored("r\(tag)-")
            #expect(Set(rows.values).count == 1, "\(rows)")
            let revoked = try connection.query(
                "SELECT count(*) FROM reconcile.apple_transactions WHERE transaction_id LIKE $1 AND revocation_date IS NOT NULL",
                ["r\(tag)-%"])[0].decode(Int.self, at: 0)
            #expect(revoked == 4)
        }
    }

    /// A refund Apple reverses comes back signed later: it clears the revocation (and what Apple
    /// said about it) whatever arrived before; an older receipt never clears one, nor does a copy of
    /// the refund signed before the reversal.
    @Test func aReversalSignedLaterClearsTheRevocationAndAnOlderReceiptNever() throws {
        let refund = Self.record(signed: Self.signed, source: .jws, revoked: Self.refunded, type: "REFUND_FULL")
        let oldReceipt = Self.record(signed: Self.signed.addingTimeInterval(-3600), source: .localReceipt)
        let reversal = Self.record(signed: Self.signed.addingTimeInterval(1), source: .notification)
        for (index, order) in Self.permutations([refund, oldReceipt]).enumerated() {
            try apply(order.map { [$0] }, as: "v-old-\(index)")
            try apply([order], as: "v-old-all-\(index)")
        }
        #expect(Set(try stored("v-old-").values).count == 1)
        #expect(try connection.query(
            "SELECT bool_and(revocation_date IS NOT NULL AND revocation_type = 'REFUND_FULL') FROM reconcile.apple_transactions WHERE transaction_id LIKE 'v-old-%'"
        )[0].decode(Bool.self, at: 0))

        for (index, order) in Self.permutations([refund, oldReceipt, reversal]).enumerated() {
            try apply(order.map { [$0] }, as: "v-rev-\(index)")
            try apply([order], as: "v-rev-all-\(index)")
        }
        #expect(Set(try stored("v-rev-").values).count == 1)
        #expect(try connection.query(
            """
            SELECT bool_and(revocation_date IS NULL AND revocation_reason IS NULL AND revocation_type IS NULL
                            AND revocation_percentage IS NULL AND source = 'notification')
              FROM reconcile.apple_transactions WHERE transaction_id LIKE 'v-rev-%'
            """)[0].decode(Bool.self, at: 0))
    }
}
