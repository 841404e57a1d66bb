import Foundation
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// The review queue's reads and transitions (SPEC section 6), legal and illegal, through the code the
/// CLI and the web pages share.
@Suite("Review queue: transitions, events and the outbox")
struct ReviewQueueTests {
    let connection: Connection
    let service: ReviewDecisions
    let queue: ReviewQueue
    let ids: [String: Int64]

    init() throws {
        let database = try TestDatabase.create("review")
        connection = try database.connect()
        _ = try Schema.migrate(connection)
        ids = try ReviewFixtures.seed(on: connection)
        service = ReviewDecisions(connection: connection, approval: .none, judgement: .asStored)
        queue = ReviewQueue(connection: connection)
    }

    func id(_ transaction: String) throws -> Int64 { try #require(ids[transaction]) }

    func count(_ sql: String, _ parameters: [any PostgresEncodable] = []) throws -> Int {
        try connection.query(sql, parameters)[0].decode(Int.self, at: 0)
    }

    func events(_ item: Int64) throws -> [ReviewEvent] { try queue.detail(id: item).events }

    // MARK: Claim

    @Test func claimMovesAnOpenItemToInReviewAndRecordsAnEvent() throws {
        let item = try id("t-m1")
        let outcome = try service.claim(id: item, by: "alice")
        #expect(outcome.changed)
        #expect(outcome.item.status == .inReview && outcome.item.assignee == "alice")
        let last = try #require(try events(item).last)
        #expect(last.actor == "alice" && last.fromStatus == .open && last.toStatus == .inReview)
    }

    @Test func claimingOnesOwnClaimAgainIsANoOp() throws {
        let item = try id("t-m1")
        _ = try service.claim(id: item, by: "alice")
        let before = try events(item).count
        let again = try service.claim(id: item, by: "alice")
        #expect(!again.changed)
        #expect(try events(item).count == before)
    }

    @Test func claimingSomeoneElsesClaimFailsWithoutForce() throws {
        let item = try id("t-m1")
        _ = try service.claim(id: item, by: "alice")
        #expect(throws: ReviewError.claimedBySomeoneElse(id: item, assignee: "alice")) {
            try service.claim(id: item, by: "bob")
        }
        let forced = try service.claim(id: item, by: "bob", force: true)
        #expect(forced.changed && forced.item.assignee == "bob")
        let last = try #require(try events(item).last)
        #expect(last.fromStatus == .inReview && last.toStatus == .inReview && last.actor == "bob")
        #expect(last.note?.contains("alice") == true)
    }

    @Test func claimingADecidedOrAutoResolvedItemFails() throws {
        let item = try id("t-d1")
        _ = try service.dismiss(id: item, by: "alice", note: "test purchase")
        #expect(throws: ReviewError.self) { try service.claim(id: item, by: "bob") }
        #expect(throws: ReviewError.autoResolved(id: try id("t-a1"))) { try service.claim(id: try id("t-a1"), by: "bob") }
    }

    // MARK: Resolve

    @Test(arguments: [
        // (transaction, resolution, action, from, to, product, quantity)
        ("t-m1", Resolution.granted, OutboxAction.grant, nil, "u1", "coin42", 1),
        ("t-d1", Resolution.revoked, OutboxAction.revoke, "u3", nil, "coin42", 1),
        ("t-r1", Resolution.revoked, OutboxAction.revoke, "u1", nil, "vip_month", 1),
        ("t-w1", Resolution.moved, OutboxAction.move, "u5", "u4", "coin42", 1),
        ("t-u1", Resolution.revoked, OutboxAction.revoke, "u8", nil, "coin4886", 1),
    ] as [(String, Resolution, OutboxAction, String?, String?, String, Int)])
    func resolvingWritesExactlyOneOutboxRow(
        transaction: String, resolution: Resolution, action: OutboxAction, from: String?, to: String?, product: String,
        quantity: Int
    ) throws {
        let item = try id(transaction)
        let outcome = try service.resolve(id: item, resolution: resolution, by: "alice", note: "checked with Apple")
        #expect(outcome.changed && outcome.item.status == .resolved && outcome.item.resolution == resolution)
        #expect(outcome.item.resolvedBy == "alice" && outcome.item.resolvedAt != nil)
        let entry = try #require(outcome.outbox)
        #expect(entry.action == action && entry.fromUserID == from && entry.toUserID == to)
        #expect(entry.productID == product && entry.quantity == quantity && entry.transactionID == transaction)
        #expect(entry.decidedBy == "alice" && entry.note == "checked with Apple")
        let last = try #require(try events(item).last)
        #expect(last.toStatus == .resolved && last.id == entry.reviewEventID)
        #expect(try count("SELECT count(*) FROM reconcile.action_outbox WHERE review_item_id = $1", [item]) == 1)
    }

    @Test func repeatingAnIdenticalResolveIsANoOpSuccess() throws {
        let item = try id("t-m1")
        let first = try service.resolve(id: item, resolution: .granted, by: "alice", note: "paid, not delivered")
        let eventsBefore = try events(item).count
        let again = try service.resolve(id: item, resolution: .granted, by: "alice", note: "paid, not delivered")
        #expect(!again.changed)
        #expect(again.outbox?.id == first.outbox?.id)
        #expect(try count("SELECT count(*) FROM reconcile.action_outbox WHERE review_item_id = $1", [item]) == 1)
        #expect(try events(item).count == eventsBefore)
    }

    @Test func anotherDecisionOnAResolvedItemIsRefused() throws {
        let item = try id("t-m1")
        _ = try service.resolve(id: item, resolution: .granted, by: "alice", note: nil)
        #expect(throws: ReviewError.self) { try service.resolve(id: item, resolution: .noAction, by: "alice", note: nil) }
        #expect(throws: ReviewError.self) { try service.resolve(id: item, resolution: .granted, by: "bob", note: nil) }
        #expect(throws: ReviewError.self) { try service.dismiss(id: item, by: "alice", note: "oops") }
        #expect(try count("SELECT count(*) FROM reconcile.action_outbox WHERE review_item_id = $1", [item]) == 1)
    }

    @Test func resolvingADismissedItemFailsWithAClearMessage() throws {
        let item = try id("t-d1")
        _ = try service.dismiss(id: item, by: "alice", note: "a tester's device")
        do {
            _ = try service.resolve(id: item, resolution: .revoked, by: "bob", note: nil)
            Issue.record("resolving a dismissed item succeeded")
        } catch let error as ReviewError {
            #expect("\(error)".contains("review item \(item) is already dismissed by alice"))
            #expect("\(error)".contains("a decision is final"))
        }
        #expect(try count("SELECT count(*) FROM reconcile.action_outbox WHERE review_item_id = $1", [item]) == 0)
    }

    @Test func resolvingAnAutoResolvedItemFails() throws {
        let item = try id("t-a1")
        #expect(throws: ReviewError.autoResolved(id: item)) {
            try service.resolve(id: item, resolution: .granted, by: "alice", note: nil)
        }
        #expect(throws: ReviewError.autoResolved(id: item)) { try service.dismiss(id: item, by: "alice", note: "x") }
    }

    @Test func noActionWritesNoOutboxRow() throws {
        let item = try id("t-s1")
        let outcome = try service.resolve(id: item, resolution: .noAction, by: "alice", note: "family sharing")
        #expect(outcome.changed && outcome.outbox == nil)
        #expect(try count("SELECT count(*) FROM reconcile.action_outbox") == 0)
    }

    @Test func grantingToAnUnknownBuyerIsRefusedAndLeavesTheItemOpen() throws {
        let item = try id("t-s1")
        #expect(throws: ReviewError.self) { try service.resolve(id: item, resolution: .granted, by: "alice", note: nil) }
        #expect(try queue.detail(id: item).item.status == .open)
        #expect(try events(item).count == 1)
    }

    @Test func movingAMissedDeliveryHasNothingToMove() throws {
        let item = try id("t-m1")
        #expect(throws: ReviewError.self) { try service.resolve(id: item, resolution: .moved, by: "alice", note: nil) }
    }

    @Test func resolvingFromInReviewKeepsTheAssignee() throws {
        let item = try id("t-r1")
        _ = try service.claim(id: item, by: "alice")
        let outcome = try service.resolve(id: item, resolution: .revoked, by: "alice", note: nil)
        #expect(outcome.item.assignee == "alice")
        #expect(try events(item).map(\.toStatus) == [.open, .inReview, .resolved])
    }

    // MARK: Dismiss

    @Test func dismissNeedsANoteAndIsIdempotent() throws {
        let item = try id("t-d1")
        #expect(throws: ReviewError.invalidInput("a note is required: say why")) {
            try service.dismiss(id: item, by: "alice", note: "  ")
        }
        let first = try service.dismiss(id: item, by: "alice", note: "QA account")
        #expect(first.changed && first.item.status == .dismissed && first.item.resolvedBy == "alice")
        #expect(first.item.resolution == nil)
        let again = try service.dismiss(id: item, by: "alice", note: "QA account")
        #expect(!again.changed)
        #expect(try events(item).filter { $0.toStatus == .dismissed }.count == 1)
    }

    @Test func blankNamesAndUnknownItemsAreRefused() throws {
        #expect(throws: ReviewError.self) { try service.claim(id: try id("t-m1"), by: "   ") }
        #expect(throws: ReviewError.notFound(id: 999_999)) { try service.claim(id: 999_999, by: "alice") }
        #expect(throws: ReviewError.notFound(id: 999_999)) { try queue.detail(id: 999_999) }
    }

    /// Issue 36 item 20: no person acts under a name the product acts under: the job's
    /// (`reconcile`), the receiver's (`receiver`, which its passes' events carry) and the policies'
    /// (`policy:…`), whatever their case, surrounding whitespace or character width.
    @Test(arguments: [
        "receiver", "Receiver", " RECEIVER ", "\treceiver\n", "ｒｅｃｅｉｖｅｒ", "reconcile", " Reconcile", "ＲＥＣＯＮＣＩＬＥ",
        "policy:x", "Policy:routine", " POLICY:", "policy：x",
    ])
    func theProductsOwnNamesAreReserved(name: String) throws {
        let events = "SELECT count(*) FROM reconcile.review_events WHERE review_item_id = $1"
        let before = try count(events, [try id("t-m1")])
        #expect(ReviewActor.reservation(of: name) != nil, "\(name)")
        #expect(throws: ReviewError.self) { try ReviewActor.validatedName(name) }
        #expect(throws: ReviewError.self) {
            try service.resolve(id: try id("t-m1"), resolution: .noAction, by: name, note: nil)
        }
        #expect(throws: ReviewError.self) { try ActionOutbox(connection: connection).ack([1], by: name) }
        #expect(try count(events, [try id("t-m1")]) == before, "nothing recorded")
    }

    @Test(arguments: ["receivers", "the receiver", "reconciler", "mei", "policy", "policyholder"])
    func namesThatOnlyResembleThemAreAPersons(name: String) throws {
        #expect(ReviewActor.reservation(of: name) == nil)
        #expect(try ReviewActor.validatedName(" \(name) ") == name)
    }

    /// One list: every actor the product writes is in it.
    @Test func theReservedListHoldsEveryActorTheProductWrites() {
        #expect(ReviewActor.reservedNames.contains(ReviewActor.jobName))
        #expect(ReviewActor.reservedNames.contains(ReviewActor.receiverName))
        #expect(ReviewActor.reservedPrefixes == [PolicyRule.actorPrefix])
    }

    // MARK: Reading

    @Test func listFiltersAndPages() throws {
        var filter = ReviewFilter()
        filter.statuses = [.open, .inReview]
        let all = try queue.list(filter, page: 1, limit: 3)
        #expect(all.total == 7 && all.items.count == 3 && all.pageCount == 3)
        #expect(all.items.first?.severity == .high)
        let last = try queue.list(filter, page: 3, limit: 3)
        #expect(last.items.count == 1)
        filter.kinds = [.missedDelivery]
        let missed = try queue.list(filter)
        #expect(Set(missed.items.compactMap(\.transactionID)) == ["t-m1", "t-x1"])
        // Counts by kind ignore the kind filter, so the other kinds still show their numbers.
        #expect(missed.countsByKind.first { $0.kind == .duplicateDelivery }?.count == 1)
        filter = ReviewFilter()
        filter.userID = "u1"
        #expect(try queue.list(filter).total == 2)
        filter = ReviewFilter()
        filter.productID = "vip_month"
        #expect(try queue.list(filter).items.map(\.transactionID) == ["t-r1"])
        filter = ReviewFilter()
        filter.severities = [.high]
        #expect(try queue.list(filter).items.allSatisfy { $0.severity == .high })
        filter = ReviewFilter()
        filter.since = Date().addingTimeInterval(3600)
        #expect(try queue.list(filter).total == 0)
        filter.since = Date().addingTimeInterval(-3600)
        filter.until = Date().addingTimeInterval(3600)
        #expect(try queue.list(filter).total == 8)
    }

    @Test func nextInQueueIsTheMostSevereOtherOpenItem() throws {
        let first = try #require(try queue.list(ReviewFilter(), limit: 1).items.first)
        let next = try #require(try queue.nextInQueue(after: first.id))
        #expect(next != first.id)
        _ = try service.dismiss(id: next, by: "alice", note: "not a problem")
        #expect(try queue.nextInQueue(after: first.id) != next)
    }

    @Test func showCarriesEvidenceEventsAndOutbox() throws {
        let item = try id("t-w1")
        _ = try service.resolve(id: item, resolution: .moved, by: "alice", note: "bound by token")
        let detail = try queue.detail(id: item)
        #expect(detail.evidence.contains("\"device\""))
        #expect(detail.events.map(\.toStatus) == [.open, .resolved])
        #expect(detail.outbox?.action == .move)
    }

    @Test func exportIsCSVWithFormulasDefused() throws {
        var text = ""
        try queue.exportCSV(ReviewFilter()) { text += $0 }
        let lines = text.split(separator: "\r\n")
        #expect(lines.count == 9)
        #expect(lines[0].hasPrefix("id,status,kind,severity,transaction_id"))
        try connection.execute("UPDATE reconcile.review_items SET user_id = '=HYPERLINK(\"x\")' WHERE id = $1", [try id("t-m1")])
        text = ""
        try queue.exportCSV(ReviewFilter()) { text += $0 }
        #expect(text.contains("\"'=HYPERLINK(\"\"x\"\")\""))
    }

    @Test func concurrentDecisionsOnOneItemWriteOneOutboxRow() async throws {
        let item = try id("t-m1")
        // Two sessions race to resolve: the row lock serialises them, the loser sees a decided item.
        let databaseURL = try connection.query("SELECT current_database()")[0].decode(String.self, at: 0)
        let server = try #require(ProcessInfo.processInfo.environment["DATABASE_URL"])
        let target = TestDatabase.url(server, database: databaseURL)
        let results = await withTaskGroup(of: Bool.self) { group in
            for person in ["alice", "bob", "carol", "dave"] {
                group.addTask {
                    guard let connection = try? Connection(url: target) else { return false }
                    return (try? ReviewDecisions(connection: connection, approval: .none, judgement: .asStored).resolve(
                        id: item, resolution: .granted, by: person, note: nil)) != nil
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.filter { $0 }.count == 1)
        #expect(try count("SELECT count(*) FROM reconcile.action_outbox WHERE review_item_id = $1", [item]) == 1)
        #expect(try count("SELECT count(*) FROM reconcile.review_events WHERE review_item_id = $1 AND to_status = 'resolved'", [item]) == 1)
    }
}
