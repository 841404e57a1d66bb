import Foundation
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// Google Play's voids (SPEC section 18): each applied once, partial refunds summed by quantity,
/// sticky against older copies of the purchase, and applied whichever arrives first.
@Suite("Google Play voids")
struct PlayVoidsTests {
    private let bought = Date(timeIntervalSince1970: 1_780_000_000)
    private var voided: Date { bought.addingTimeInterval(86_400) }

    private func purchase(_ order: String, quantity: Int = 1, signed: Date? = nil) -> AppleTransactionRecord {
        var record = AppleTransactionRecord(
            transactionID: order, originalTransactionID: order, productID: "coin42", bundleID: "com.example.game",
            environment: .production, quantity: quantity, purchaseDate: bought, signedDate: signed ?? bought,
            source: .playPurchase)
        record.store = .googlePlay
        record.purchaseToken = "token-\(order)"
        return record
    }

    private func void(_ order: String, at date: Date, units: Int? = nil, reason: Int = 1) -> PlayVoid {
        PlayVoid(orderID: order, purchaseToken: "token-\(order)", packageName: "com.example.game", voidedAt: date,
                 purchasedAt: bought, voidedQuantity: units, voidedReason: reason, voidedSource: 0)
    }

    private func row(_ order: String, _ connection: Connection) throws -> (revoked: Date?, units: Int?, reason: Int?) {
        let row = try connection.query(
            "SELECT revocation_date, refunded_quantity, revocation_reason FROM reconcile.apple_transactions WHERE transaction_id = $1",
            [order])[0]
        return (try row.decode(Date?.self, at: 0), try row.decode(Int?.self, at: 1), try row.decode(Int?.self, at: 2))
    }

    private func run(_ connection: Connection) throws -> Int64 {
        try connection.query("INSERT INTO reconcile.runs (window_until, environment) VALUES (now(), 'production') RETURNING id")[0]
            .decode(Int64.self, at: 0)
    }

    @Test func aVoidSeenTwiceIsAppliedOnce() throws {
        let (_, connection) = try TestDatabase.migrated("play_voids_once")
        let runID = try run(connection)
        try TransactionStore.upsert([(purchase("GPA.1"), nil)], runID: runID, on: connection)
        #expect(try PlayVoids.record([void("GPA.1", at: voided, reason: 8)], runID: runID, on: connection) == ["GPA.1"])
        let first = try row("GPA.1", connection)
        #expect(first.revoked == voided && first.units == nil && first.reason == 8)
        // The next window overlaps: the same void again changes nothing, and no row is touched.
        #expect(try PlayVoids.record([void("GPA.1", at: voided, reason: 8)], runID: runID, on: connection) == [])
        #expect(try connection.query("SELECT count(*) FROM reconcile.play_voided_purchases")[0].decode(Int.self, at: 0) == 1)
    }

    @Test func partialRefundsAddUpByQuantity() throws {
        let (_, connection) = try TestDatabase.migrated("play_voids_partial")
        let runID = try run(connection)
        try TransactionStore.upsert([(purchase("GPA.2", quantity: 5), nil)], runID: runID, on: connection)
        try PlayVoids.record([void("GPA.2", at: voided, units: 1)], runID: runID, on: connection)
        #expect(try row("GPA.2", connection).units == 1)
        try PlayVoids.record([void("GPA.2", at: voided.addingTimeInterval(60), units: 2)], runID: runID, on: connection)
        #expect(try row("GPA.2", connection).units == 3)
        // Refunds covering every unit are a whole void.
        try PlayVoids.record([void("GPA.2", at: voided.addingTimeInterval(120), units: 2)], runID: runID, on: connection)
        let whole = try row("GPA.2", connection)
        #expect(whole.revoked == voided.addingTimeInterval(120) && whole.units == nil)
    }

    /// The void first, the purchase after (a late upload): applied when the purchase arrives; and
    /// an older copy of the purchase (its signed purchaseData) never clears a void.
    @Test func voidsAreStickyWhateverArrivesFirst() throws {
        let (_, connection) = try TestDatabase.migrated("play_voids_order")
        let runID = try run(connection)
        #expect(try PlayVoids.record([void("GPA.3", at: voided)], runID: runID, on: connection) == [])
        try TransactionStore.upsert([(purchase("GPA.3"), nil)], runID: runID, on: connection)
        #expect(try row("GPA.3", connection).revoked == voided)
        try TransactionStore.upsert([(purchase("GPA.3"), nil)], runID: runID, on: connection)
        #expect(try row("GPA.3", connection).revoked == voided)
        // Even a copy signed after the void (an API answer) leaves it revoked: Google never undoes a void.
        try TransactionStore.upsert([(purchase("GPA.3", signed: voided.addingTimeInterval(3600)), nil)], runID: runID, on: connection)
        #expect(try row("GPA.3", connection).revoked == voided)
    }
}
