import Foundation
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// Issue 27 item 3: a second person above a value. With `RECONCILE_APPROVAL_ABOVE`, a decision
/// that makes the app act on an item worth more waits in `awaiting_approval`, writing no outbox
/// row, until another person approves it (exactly that decision takes effect, once) or rejects it
/// (open again, with the reason).
@Suite("Approval above a value: awaiting_approval, approve and reject")
struct ApprovalTests {
    static let threshold = ApprovalThreshold(parsing: "CNY=648,USD=99")!

    // MARK: The threshold

    @Test(arguments: [
        ("CNY=648,USD=99", ["CNY": 648_000, "USD": 99_000] as [String: Int64]),
        ("cny=6.5", ["CNY": 6_500]),
        (" JPY = 10000 , KWD=1.125", ["JPY": 10_000_000, "KWD": 1_125]),
    ])
    func aThresholdReadsAmountsPerCurrencyInMajorUnits(text: String, expected: [String: Int64]) {
        #expect(ApprovalThreshold(parsing: text)?.milliByCurrency == expected)
    }

    @Test(arguments: ["", "CNY", "CNY=", "=648", "CNY=-1", "CNY=6,5", "CNY=648,CNY=99", "CNY=1.2345", "C1Y=5", "CNY=648,"])
    func aMalformedThresholdIsRefused(text: String) {
        #expect(ApprovalThreshold(parsing: text) == nil, "\(text)")
    }

    /// Strictly above; an unknown amount, currency, or a currency the setting does not name waits.
    @Test func aboveIsStrictAndAnUnknownValueWaits() {
        let t = Self.threshold
        #expect(!t.isExceeded(by: Money(milli: 648_000, currency: "CNY")))
        #expect(t.isExceeded(by: Money(milli: 648_001, currency: "CNY")))
        #expect(t.isExceeded(by: Money(milli: 648_001, currency: "cny")))
        #expect(!t.isExceeded(by: Money(milli: 6_000, currency: "USD")))
        #expect(t.isExceeded(by: Money(milli: 1, currency: "EUR")), "a currency without a limit waits")
        #expect(t.isExceeded(by: nil), "an unknown value waits")
        #expect(!ApprovalThreshold.none.isExceeded(by: nil), "without the setting nothing waits")
        #expect(t.description == "CNY=648.00,USD=99.00")
    }

    @Test func theSettingIsReadAndABadOneNamesItsKey() throws {
        let settings = try Settings(lookup: { ["RECONCILE_APPROVAL_ABOVE": "CNY=648", "RECONCILE_BULK_LIMIT": "7"][$0] },
                                    requireBundleIDs: false)
        #expect(settings.approvalAbove.milliByCurrency == ["CNY": 648_000])
        #expect(settings.bulkLimit == 7)
        #expect(try Settings(lookup: { _ in nil }, requireBundleIDs: false).approvalAbove == .none)
        #expect(throws: SettingsError.self) {
            try Settings(lookup: { ["RECONCILE_APPROVAL_ABOVE": "lots"][$0] }, requireBundleIDs: false)
        }
    }

    // MARK: The service

    /// An outage day of `count` 6.00 CNY missed deliveries (BulkDecisionTests' world), with the
    /// first `expensive` of them made worth 1,000.00 CNY and one of unknown value.
    static func world(_ name: String, count: Int, expensive: Int) throws -> (TestDatabase, Connection) {
        let (database, connection) = try BulkDecisionTests.outageDay(name, count: count)
        try connection.execute(
            "UPDATE reconcile.review_items SET amount_milli = 1000000 WHERE transaction_id = ANY($1::text[])",
            [(1...max(1, expensive)).prefix(expensive).map { "OUT-\($0)" }])
        try connection.execute("UPDATE reconcile.review_items SET amount_milli = NULL WHERE transaction_id = 'PRICIER'")
        return (database, connection)
    }

    static func item(_ transaction: String, _ connection: Connection) throws -> Int64 {
        try connection.query("SELECT id FROM reconcile.review_items WHERE transaction_id = $1", [transaction])[0]
            .decode(Int64.self, at: 0)
    }

    static func outboxRows(_ connection: Connection, item: Int64? = nil) throws -> Int {
        try connection.query(
            "SELECT count(*) FROM reconcile.action_outbox WHERE $1::bigint IS NULL OR review_item_id = $1", [item]
        )[0].decode(Int.self, at: 0)
    }

    @Test func aDecisionAboveTheValueWaitsAndAnotherPersonsApprovalAppliesItOnce() throws {
        let (_, connection) = try Self.world("approval_service", count: 3, expensive: 1)
        let service = ReviewDecisions(connection: connection, approval: Self.threshold, judgement: .asStored)
        let queue = ReviewQueue(connection: connection)
        let id = try Self.item("OUT-1", connection)

        let decided = try service.resolve(id: id, resolution: .granted, by: "mei", note: "outage of 20 Nov")
        #expect(decided.changed && decided.item.status == .awaitingApproval && decided.outbox == nil)
        #expect(decided.item.pending == PendingDecision(
            resolution: .granted, by: "mei", at: try #require(decided.item.pending?.at), note: "outage of 20 Nov"))
        #expect(try Self.outboxRows(connection) == 0, "nothing reaches the outbox before approval")

        let again = try service.resolve(id: id, resolution: .granted, by: "mei", note: "outage of 20 Nov")
        #expect(!again.changed && again.item.status == .awaitingApproval)
        #expect(throws: ReviewError.awaitingApproval(id: id, resolution: .granted, by: "mei")) {
            try service.resolve(id: id, resolution: .noAction, by: "tom", note: nil)
        }
        #expect(throws: ReviewError.awaitingApproval(id: id, resolution: .granted, by: "mei")) {
            try service.dismiss(id: id, by: "tom", note: "nothing")
        }
        #expect(throws: ReviewError.awaitingApproval(id: id, resolution: .granted, by: "mei")) {
            try service.claim(id: id, by: "tom")
        }

        #expect(throws: ReviewError.ownDecision(id: id, by: "mei")) { try service.approve(id: id, by: "Mei") }
        #expect(throws: ReviewError.invalidInput("names starting with policy: are the policies'; use your own name")) {
            try service.approve(id: id, by: "policy:routine")
        }
        #expect(try queue.detail(id: id).item.status == .awaitingApproval, "refusals change nothing")
        #expect(try Self.outboxRows(connection) == 0)

        let approved = try service.approve(id: id, by: "tom", note: "checked the outage log")
        #expect(approved.changed && approved.item.status == .resolved && approved.item.resolution == .granted)
        #expect(approved.item.resolvedBy == "mei" && approved.item.approvedBy == "tom" && approved.item.pending == nil)
        #expect(approved.item.note == "outage of 20 Nov")
        let entry = try #require(approved.outbox)
        #expect(entry.action == .grant && entry.decidedBy == "mei" && entry.note == "outage of 20 Nov")
        #expect(entry.toUserID == "player-1" && entry.productID == "coins_600" && entry.quantity == 1)

        let twice = try service.approve(id: id, by: "tom")
        #expect(!twice.changed && twice.outbox?.id == entry.id)
        #expect(throws: ReviewError.notAwaitingApproval(id: id, status: .resolved)) { try service.approve(id: id, by: "ann") }
        #expect(try Self.outboxRows(connection, item: id) == 1)
        let history = try queue.detail(id: id).events.map { "\($0.actor) \($0.fromStatus?.rawValue ?? "-")→\($0.toStatus.rawValue)" }
        #expect(history == ["mei open→awaiting_approval", "tom awaiting_approval→resolved"])
        #expect(try queue.detail(id: id).events.last?.reviewEventOutbox(entry) == true)
    }

    @Test func aRejectionReopensTheItemWithItsReasonAndQueuesNothing() throws {
        let (_, connection) = try Self.world("approval_reject", count: 2, expensive: 1)
        let service = ReviewDecisions(connection: connection, approval: Self.threshold, judgement: .asStored)
        let queue = ReviewQueue(connection: connection)
        let id = try Self.item("OUT-1", connection)
        _ = try service.claim(id: id, by: "mei")
        _ = try service.resolve(id: id, resolution: .granted, by: "mei", note: nil)

        #expect(throws: ReviewError.invalidInput("a note is required: say why")) {
            try service.reject(id: id, by: "tom", note: " ")
        }
        let rejected = try service.reject(id: id, by: "tom", note: "the ledger shows a delivery on 21 Nov")
        #expect(rejected.changed && rejected.item.status == .open && rejected.item.assignee == nil)
        #expect(rejected.item.pending == nil && rejected.item.resolution == nil)
        let last = try #require(try queue.detail(id: id).events.last)
        #expect(last.actor == "tom" && last.fromStatus == .awaitingApproval && last.toStatus == .open)
        #expect(last.note == "the ledger shows a delivery on 21 Nov")
        #expect(!(try service.reject(id: id, by: "tom", note: "again")).changed, "rejecting again changes nothing")
        #expect(throws: ReviewError.notAwaitingApproval(id: id, status: .open)) {
            try service.reject(id: id, by: "ann", note: "why not")
        }
        #expect(throws: ReviewError.notAwaitingApproval(id: id, status: .open)) { try service.approve(id: id, by: "ann") }
        #expect(try Self.outboxRows(connection) == 0)

        // Open again, it is decided afresh: below nothing changed, so it waits again.
        let redo = try service.resolve(id: id, resolution: .granted, by: "ann", note: nil)
        #expect(redo.item.status == .awaitingApproval && redo.item.pending?.by == "ann")
    }

    /// An approval or a rejection names the decision it was shown (the item page's forms do):
    /// withdrawn and decided again meanwhile, even as the same resolution, it is another decision,
    /// and neither applies it. The decision shown now is approved.
    @Test func anApprovalOfADecisionWithdrawnMeanwhileChangesNothing() throws {
        let (_, connection) = try Self.world("approval_seen", count: 1, expensive: 1)
        let service = ReviewDecisions(connection: connection, approval: Self.threshold, judgement: .asStored)
        let queue = ReviewQueue(connection: connection)
        let id = try Self.item("OUT-1", connection)
        let first = try #require(try service.resolve(id: id, resolution: .granted, by: "mei", note: nil).item.pending)
        let shown = SeenDecision(first)
        _ = try service.reject(id: id, by: "mei", note: "withdrawn", seen: shown)
        let second = try #require(try service.resolve(id: id, resolution: .granted, by: "mei", note: "again").item.pending)
        #expect(second.at != first.at)

        #expect(throws: ReviewError.decisionChanged(id: id, resolution: .granted, by: "mei")) {
            try service.approve(id: id, by: "tom", seen: shown)
        }
        #expect(throws: ReviewError.decisionChanged(id: id, resolution: .granted, by: "mei")) {
            try service.reject(id: id, by: "tom", note: "no", seen: SeenDecision(resolution: .revoked, at: shown.at))
        }
        #expect(try queue.detail(id: id).item.pending == second, "refusals change nothing")
        #expect(try Self.outboxRows(connection) == 0)

        let seenNow = SeenDecision(try #require(try queue.detail(id: id).item.pending))
        let approved = try service.approve(id: id, by: "tom", seen: seenNow)
        #expect(approved.changed && approved.item.status == .resolved && approved.item.note == "again")
        #expect(try Self.outboxRows(connection) == 1)
    }

    /// What waits: granted, revoked and moved above the value, and those of unknown value; a
    /// decision below it, no_action and a dismissal take effect at once.
    @Test func onlyDecisionsThatMakeTheAppActAboveTheValueWait() throws {
        let (_, connection) = try Self.world("approval_which", count: 4, expensive: 3)
        let service = ReviewDecisions(connection: connection, approval: Self.threshold, judgement: .asStored)
        let queue = ReviewQueue(connection: connection)
        #expect(try service.resolve(id: Self.item("OUT-1", connection), resolution: .noAction, by: "mei", note: nil)
            .item.status == .resolved)
        #expect(try service.dismiss(id: Self.item("OUT-2", connection), by: "mei", note: "test purchase")
            .item.status == .dismissed)
        #expect(try service.resolve(id: Self.item("OUT-3", connection), resolution: .granted, by: "mei", note: nil)
            .item.status == .awaitingApproval)
        #expect(try service.resolve(id: Self.item("OUT-4", connection), resolution: .granted, by: "mei", note: nil)
            .item.status == .resolved, "6.00 CNY is below 648")
        #expect(try service.resolve(id: Self.item("PRICIER", connection), resolution: .granted, by: "mei", note: nil)
            .item.status == .awaitingApproval, "an unknown value waits")
        #expect(try service.resolve(id: Self.item("YEN", connection), resolution: .granted, by: "mei", note: nil)
            .item.status == .awaitingApproval, "JPY has no limit: it waits")
        #expect(try Self.outboxRows(connection) == 1)
        // Without the setting nothing waits.
        let plain = ReviewDecisions(connection: connection, approval: .none, judgement: .asStored)
        #expect(try plain.resolve(id: Self.item("LATER", connection), resolution: .granted, by: "mei", note: nil)
            .item.status == .resolved)
        var filter = ReviewFilter()
        filter.statuses = [.awaitingApproval]
        #expect(try queue.list(filter).items.map(\.transactionID) == ["OUT-3", "PRICIER", "YEN"])
    }
}

extension ReviewEvent {
    /// Whether the outbox row was written by this event.
    fileprivate func reviewEventOutbox(_ entry: OutboxEntry) -> Bool { entry.reviewEventID == id }
}
