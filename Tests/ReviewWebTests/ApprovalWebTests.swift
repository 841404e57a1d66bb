import Foundation
import Hummingbird
import HummingbirdTesting
import Postgres
@testable import Reconciliation
import ReviewWeb
import TestSupport
import Testing

/// Issue 27 in the browser: the queue page selects items (each, or everything the filter
/// matches), a confirmation page shows their count and value, one POST decides each as a single
/// decision; above `RECONCILE_APPROVAL_ABOVE` the item page offers another person approve and
/// reject. In English and Simplified Chinese.
@Suite("Review pages: bulk decisions and approval")
struct ApprovalWebTests {
    let database: TestDatabase
    let connection: Connection
    let ids: [String: Int64]

    init() throws {
        (database, connection) = try TestDatabase.migrated("reviewweb_approval")
        ids = try ReviewFixtures.seed(on: connection)
        // The two open missed deliveries are worth 6.00 CNY and 700.00 CNY.
        try connection.execute(
            """
            UPDATE reconcile.review_items SET currency = 'CNY',
                   amount_milli = CASE transaction_id WHEN 't-m1' THEN 6000 ELSE 700000 END
             WHERE kind = 'missed_delivery'
            """)
    }

    func id(_ transaction: String) throws -> Int64 { try #require(ids[transaction]) }

    func withApp(
        approval: ApprovalThreshold = .none, bulkLimit: Int = BulkDecision.defaultLimit,
        _ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        var configuration = ReviewWebConfiguration(
            host: "127.0.0.1", port: 0, databaseURL: database.url, token: Secret(ReviewWebTests.token), judgement: .asStored)
        configuration.approval = approval
        configuration.bulkLimit = bulkLimit
        let application = try buildApplication(configuration: configuration)
        try await application.test(.router) { client in try await test(client) }
    }

    static func get(
        _ client: any TestClientProtocol, _ uri: String, cookie: String, language: String = "en"
    ) async throws -> (HTTPResponse.Status, String) {
        let response = try await client.execute(
            uri: uri, method: .get, headers: [.cookie: cookie, .init("Accept-Language")!: language])
        return (response.status, String(buffer: response.body))
    }

    func statuses() throws -> [String: String] { try Self.statuses(database.url) }
    func outboxRows() throws -> Int { try Self.outboxRows(database.url) }

    /// The missed deliveries' statuses, read on a connection of its own (for the app's closures).
    static func statuses(_ url: String) throws -> [String: String] {
        Dictionary(uniqueKeysWithValues: try Connection(url: url).query(
            "SELECT transaction_id, status FROM reconcile.review_items WHERE kind = 'missed_delivery'"
        ).map { (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1)) })
    }

    static func outboxRows(_ url: String) throws -> Int {
        try Connection(url: url).query("SELECT count(*) FROM reconcile.action_outbox")[0].decode(Int.self, at: 0)
    }

    /// The hidden fields of the form `id` on a page, as a browser would post them.
    static func hiddenFields(of id: String, in page: String) throws -> [(String, String)] {
        let start = try #require(page.range(of: "id=\"\(id)\"")).upperBound
        let end = try #require(page[start...].range(of: "</form>")).lowerBound
        let hidden = /<input type="hidden" name="([^"]*)" value="([^"]*)">/
        return page[start..<end].matches(of: hidden).map { (String($0.1), String($0.2)) }
    }

    /// An attribute's value as a browser posts it: the page's HTML escapes undone.
    static func unescaped(_ value: String) -> String {
        value.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    /// The outbox as `<transaction> <action> to=<user> from=<user>` lines, oldest first.
    static func outbox(_ url: String) throws -> [String] {
        try Connection(url: url).query(
            """
            SELECT i.transaction_id || ' ' || o.action || ' to=' || coalesce(o.to_user_id, '-')
                   || ' from=' || coalesce(o.from_user_id, '-')
              FROM reconcile.action_outbox o JOIN reconcile.review_items i ON i.id = o.review_item_id ORDER BY o.id
            """
        ).map { try $0.decode(String.self, at: 0) }
    }

    // MARK: Bulk

    @Test(arguments: [("en", "Decide these items", "Decide 2 items"), ("zh-Hans", "批量处理以下问题单", "处理这 2 条")])
    func everythingTheFilterMatchesIsConfirmedThenDecidedByOnePost(
        language: String, heading: String, submit: String
    ) async throws {
        let url = database.url
        let first = try id("t-m1")
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            let (_, queue) = try await Self.get(client, "/?kind=missed_delivery", cookie: cookie, language: language)
            #expect(queue.contains("<form method=\"get\" action=\"/bulk\" id=\"bulk\""))
            #expect(queue.contains("name=\"id\" value=\"\(first)\" form=\"bulk\""))
            #expect(queue.contains("name=\"all\" value=\"1\""))
            #expect(queue.contains("<input type=\"hidden\" name=\"kind\" value=\"missed_delivery\">"))

            let query = "kind=missed_delivery&all=1"
            let (status, page) = try await Self.get(client, "/bulk?\(query)", cookie: cookie, language: language)
            #expect(status == .ok)
            #expect(page.contains(heading) && page.contains(submit), "\(page)")
            #expect(page.contains("706.00"), "the value per currency: \(page)")
            #expect(page.contains("name=\"count\" value=\"2\""))
            #expect(try Self.statuses(url)["t-m1"] == "open", "the confirmation decides nothing")

            let confirmed = try Self.hiddenFields(of: "bulk-decide", in: page)
            let selection = try #require(confirmed.first { $0.0 == "selection" }).1
            let csrf = try await ReviewWebTests.csrf(client, cookie: cookie)
            let forged = try await ReviewWebTests.post(
                client, "/bulk?\(query)", cookie: cookie,
                [("csrf_token", "forged"), ("decision", "granted"), ("count", "2"), ("selection", selection)])
            #expect(forged.status == .forbidden)
            let stale = try await ReviewWebTests.post(
                client, "/bulk?\(query)", cookie: cookie,
                [("csrf_token", csrf), ("decision", "granted"), ("count", "3"), ("selection", selection)])
            #expect(stale.status == .conflict, "a count other than the one shown decides nothing")
            #expect(try Self.outboxRows(url) == 0)

            let done = try await ReviewWebTests.post(
                client, "/bulk?\(query)", cookie: cookie, confirmed + [("decision", "granted"), ("note", "outage")])
            #expect(done.status == .seeOther)
            #expect(done.headers[.location] == "/?kind=missed_delivery")
            let (_, after) = try await Self.get(client, "/?kind=missed_delivery", cookie: cookie, language: language)
            // The flash is written in the POST's language (this client's POSTs ask for none: English).
            #expect(after.contains("2 items decided by alice."), "\(after)")
            // The same POST again finds nothing it may decide: nothing twice.
            let again = try await ReviewWebTests.post(
                client, "/bulk?\(query)", cookie: cookie, confirmed + [("decision", "granted")])
            #expect(again.status == .conflict)
        }
        #expect(try statuses().filter { $0.value == "resolved" }.count == 2)
        #expect(try outboxRows() == 2)
        let events = try connection.query(
            "SELECT count(*) FROM reconcile.review_events WHERE to_status = 'resolved' AND actor = 'alice'"
        )[0].decode(Int.self, at: 0)
        #expect(events == 2)
    }

    @Test func onlyTheTickedItemsAreDecidedAndTheLimitHolds() async throws {
        let ticked = try id("t-m1")
        try await withApp(bulkLimit: 1) { client in
            let cookie = try await ReviewWebTests.login(client)
            let (_, nothing) = try await Self.get(client, "/bulk?kind=missed_delivery", cookie: cookie)
            #expect(nothing.contains("Nothing selected that you may decide now"), "nothing ticked is not everything")
            #expect(!nothing.contains("id=\"bulk-decide\""))
            let (_, over) = try await Self.get(client, "/bulk?kind=missed_delivery&all=1", cookie: cookie)
            #expect(over.contains("over the limit of 1"), "\(over)")
            #expect(!over.contains("id=\"bulk-decide\""))

            let csrf = try await ReviewWebTests.csrf(client, cookie: cookie)
            let refused = try await ReviewWebTests.post(
                client, "/bulk?kind=missed_delivery&all=1", cookie: cookie,
                [("csrf_token", csrf), ("decision", "dismiss"), ("count", "2"), ("note", "tests")])
            #expect(refused.status == .conflict)
            let noNote = try await ReviewWebTests.post(
                client, "/bulk?id=\(ticked)", cookie: cookie, [("csrf_token", csrf), ("decision", "dismiss"), ("count", "1")])
            #expect(noNote.status == .badRequest)
            let (_, one) = try await Self.get(client, "/bulk?id=\(ticked)", cookie: cookie)
            let done = try await ReviewWebTests.post(
                client, "/bulk?id=\(ticked)", cookie: cookie,
                try Self.hiddenFields(of: "bulk-decide", in: one) + [("decision", "dismiss"), ("note", "test purchase")])
            #expect(done.status == .seeOther)
        }
        #expect(try statuses() == ["t-m1": "dismissed", "t-x1": "open", "t-a1": "auto_resolved"])
    }

    /// The confirmation shows 2 items worth ¥706.00. Before it is posted, bob dismisses one of them
    /// and a run opens a ¥6,480.00 missed delivery: 2 items still, but not the 2 shown. The POST
    /// carries the page's digest of the items it showed, so it decides nothing and shows the new
    /// selection. The new one, confirmed, is decided. (A POST without a digest, from a client of
    /// the pages' first form, is held to its count alone.)
    @Test func aBulkConfirmationOfTwoItemsDecidesAnItemThePersonNeverSaw() async throws {
        let url = database.url
        let first = try id("t-m1")
        try await withApp { client in
            let alice = try await ReviewWebTests.login(client, name: "alice")
            let query = "kind=missed_delivery&all=1"
            let (status, page) = try await Self.get(client, "/bulk?\(query)", cookie: alice)
            #expect(status == .ok && page.contains("name=\"count\" value=\"2\"") && page.contains("706.00"))
            let seen = try Self.hiddenFields(of: "bulk-decide", in: page)

            _ = try ReviewDecisions(connection: try Connection(url: url), approval: .none, judgement: .asStored)
                .dismiss(id: first, by: "bob", note: "test purchase")
            try Connection(url: url).execute(
                """
                INSERT INTO reconcile.review_items
                    (fingerprint, kind, severity, status, transaction_id, original_transaction_id, user_id, product_id,
                     suggested_action, evidence, first_seen_run, last_seen_run, amount_milli, currency,
                     grant_to_user_id, grant_product_id, grant_quantity)
                SELECT 'missed_delivery:t-big', 'missed_delivery', 'high', 'open', 't-big', 't-big', 'u9', 'coin6480',
                       'grant', '{}', max(id), max(id), 6480000, 'CNY', 'u9', 'coin6480', 1
                  FROM reconcile.runs
                """)

            let stale = try await ReviewWebTests.post(
                client, "/bulk?\(query)", cookie: alice, seen + [("decision", "granted"), ("note", "outage")])
            #expect(stale.status == .conflict, "the items confirmed (¥706.00) are not the ones selected now")
            let shown = String(buffer: stale.body)
            #expect(shown.contains(Catalog.of(.english).text("bulk.changed", ["count": "2"])), "\(shown)")
            #expect(shown.contains("7,180.00"), "the new selection's value: \(shown)")
            #expect(try Self.outbox(url).isEmpty)

            let renewed = try Self.hiddenFields(of: "bulk-decide", in: shown)
            let done = try await ReviewWebTests.post(
                client, "/bulk?\(query)", cookie: alice, renewed + [("decision", "granted"), ("note", "outage")])
            #expect(done.status == .seeOther)
        }
        // t-x1's user is the fixtures' hostile name: the transaction and the action say enough.
        #expect(try Self.outbox(url).map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
            == ["t-x1 grant", "t-big grant"])
    }

    // MARK: Approval

    /// Issue 36 item 5 on the item page: the page shows what each action would do and sends it
    /// back with the decision; when a run changed whom the grant goes to after the page was
    /// shown, the decision is refused (409, the reason in the reader's language) and nothing is
    /// queued; decided again from the page as it is now, it takes effect.
    @Test(arguments: ["en", "zh-Hans"])
    func aDecisionOnAnActionThePageNoLongerShowsIsRefused(language: String) async throws {
        let item = try id("t-m1")
        let t = Catalog.of(language == "en" ? .english : .simplifiedChinese)
        let url = database.url
        try await withApp { client in
            let mei = try await ReviewWebTests.login(client, name: "mei")
            let (_, page) = try await Self.get(client, "/items/\(item)", cookie: mei, language: language)
            let grant = t.text("outbox.grant", ["product": "coin42", "quantity": "1", "from": "?", "to": "u1"])
            #expect(page.contains(grant), "\(page)")
            let shown = try Self.hiddenFields(of: "resolve-form", in: page).map { ($0.0, Self.unescaped($0.1)) }
            #expect(shown.contains { $0.0 == "shown_granted" })
            // A run binds the purchase to another account meanwhile.
            try Connection(url: url).execute(
                "UPDATE reconcile.review_items SET grant_to_user_id = 'someone-else' WHERE id = $1", [item])
            let refused = try await ReviewWebTests.post(
                client, "/items/\(item)/resolve", cookie: mei, shown + [("resolution", "granted")])
            #expect(refused.status == .conflict)
            let body = String(buffer: refused.body)
            #expect(body.contains("grant coin42 ×1 to someone-else") && body.contains("not grant coin42 ×1 to u1"), "\(body)")
            #expect(try Self.statuses(url)["t-m1"] == "open" && (try Self.outboxRows(url)) == 0)
            // A shown action that is not one is a bad request, not a server error.
            let garbled = try await ReviewWebTests.post(
                client, "/items/\(item)/resolve", cookie: mei,
                shown.map { $0.0 == "shown_granted" ? ($0.0, "{not json") : $0 } + [("resolution", "granted")])
            #expect(garbled.status == .badRequest)
            let (_, now) = try await Self.get(client, "/items/\(item)", cookie: mei, language: language)
            let decided = try await ReviewWebTests.post(
                client, "/items/\(item)/resolve", cookie: mei,
                try Self.hiddenFields(of: "resolve-form", in: now).map { ($0.0, Self.unescaped($0.1)) }
                    + [("resolution", "granted")])
            #expect(decided.status == .seeOther)
        }
        #expect(try Self.outbox(url) == ["t-m1 grant to=someone-else from=-"])
    }

    /// Issue 36 item 6 on the queue page: a bulk selection of a missed delivery and a duplicate
    /// names its kinds, offers only what both allow (no "granted" for the duplicate), and
    /// preselects nothing; the selection of missed deliveries alone preselects "granted".
    @Test func theBulkConfirmationNamesItsKindsAndOffersWhatEveryKindAllows() async throws {
        let t = Catalog.of(.english)
        let (missed, duplicate) = (try id("t-m1"), try id("t-d1"))
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            let (_, mixed) = try await Self.get(client, "/bulk?id=\(missed)&id=\(duplicate)", cookie: cookie)
            #expect(mixed.contains(t.text("bulk.kind_line", ["kind": t.kind(.missedDelivery), "count": "1"])))
            #expect(mixed.contains(t.text("bulk.kind_line", ["kind": t.kind(.duplicateDelivery), "count": "1"])))
            #expect(!mixed.contains("<option value=\"granted\"") && !mixed.contains("<option value=\"revoked\""))
            #expect(mixed.contains("<option value=\"no_action\"") && mixed.contains("<option value=\"\" selected>"))
            let (_, alone) = try await Self.get(client, "/bulk?kind=missed_delivery&all=1", cookie: cookie)
            #expect(alone.contains("<option value=\"granted\" selected>"), "\(alone)")
        }
    }

    /// The item page offers only the resolutions the item's kind allows (issue 36 item 6).
    @Test func theItemPageOffersOnlyTheResolutionsTheKindAllows() async throws {
        let item = try id("t-d1")
        try await withApp { client in
            let mei = try await ReviewWebTests.login(client, name: "mei")
            let (_, page) = try await Self.get(client, "/items/\(item)", cookie: mei)
            #expect(page.contains("<option value=\"revoked\"") && page.contains("<option value=\"no_action\""))
            #expect(!page.contains("<option value=\"granted\"") && !page.contains("<option value=\"moved\""))
            let csrf = try await ReviewWebTests.csrf(client, cookie: mei)
            let refused = try await ReviewWebTests.post(
                client, "/items/\(item)/resolve", cookie: mei, [("csrf_token", csrf), ("resolution", "granted")])
            #expect(refused.status == .conflict)
        }
        #expect(try outboxRows() == 0)
    }

    @Test(arguments: ["en", "zh-Hans"])
    func aDecisionAboveTheValueWaitsForAnotherPersonOnTheItemPage(language: String) async throws {
        let item = try id("t-x1")
        let threshold = try #require(ApprovalThreshold(parsing: "CNY=648"))
        let t = Catalog.of(language == "en" ? .english : .simplifiedChinese)
        let url = database.url
        try await withApp(approval: threshold) { client in
            let alice = try await ReviewWebTests.login(client, name: "alice")
            let csrf = try await ReviewWebTests.csrf(client, cookie: alice)
            let decided = try await ReviewWebTests.post(
                client, "/items/\(item)/resolve", cookie: alice, [("csrf_token", csrf), ("resolution", "granted")])
            #expect(decided.status == .seeOther)
            #expect(try Self.statuses(url)["t-x1"] == "awaiting_approval" && (try Self.outboxRows(url)) == 0)
            let (_, own) = try await Self.get(client, "/items/\(item)", cookie: alice, language: language)
            #expect(own.contains(t["item.own_decision"]) && !own.contains("id=\"approve-form\""), "\(own)")
            let refused = try await ReviewWebTests.post(
                client, "/items/\(item)/approve", cookie: alice, [("csrf_token", csrf)])
            #expect(refused.status == .conflict, "the decider cannot approve")
            #expect(try Self.outboxRows(url) == 0)

            let bob = try await ReviewWebTests.login(client, name: "bob")
            let (_, queue) = try await Self.get(client, "/?status=awaiting_approval", cookie: bob, language: language)
            #expect(queue.contains("/items/\(item)") && queue.contains(t["status.awaiting_approval"]))
            let (_, page) = try await Self.get(client, "/items/\(item)", cookie: bob, language: language)
            #expect(page.contains("id=\"approve-form\"") && page.contains("id=\"reject-form\""))
            #expect(page.contains(t["item.approve"]) && page.contains(t["item.reject"]))
            let bobCSRF = try await ReviewWebTests.csrf(client, cookie: bob)
            let approved = try await ReviewWebTests.post(
                client, "/items/\(item)/approve", cookie: bob, [("csrf_token", bobCSRF)])
            #expect(approved.status == .seeOther)
            let (_, after) = try await Self.get(client, "/items/\(item)", cookie: bob, language: language)
            #expect(after.contains("id=\"approved\""), "\(after)")
        }
        #expect(try statuses()["t-x1"] == "resolved")
        let row = try connection.query(
            "SELECT decided_by, review_event_id FROM reconcile.action_outbox WHERE review_item_id = $1", [item])
        #expect(row.count == 1)
        #expect(try row.first?.decode(String.self, at: 0) == "alice")
    }

    /// Bob opens t-w1 (a wrong account: u4 paid, u5 got the goods) while Alice's "moved" waits for
    /// approval. Before he clicks, Alice withdraws it and decides "granted" instead. Bob's Approve
    /// from the page that showed "moved" is refused, and so is his Reject from it: each form names
    /// the decision it was shown, and the one waiting now is another. From a page showing the grant,
    /// his Approve grants.
    @Test func anApprovalPostedFromAPageShowingOneDecisionApprovesAnother() async throws {
        let item = try id("t-w1")
        let threshold = try #require(ApprovalThreshold(parsing: "CNY=648"))
        let t = Catalog.of(.english)
        let url = database.url
        try await withApp(approval: threshold) { client in
            let alice = try await ReviewWebTests.login(client, name: "alice")
            let aliceCSRF = try await ReviewWebTests.csrf(client, cookie: alice)
            let moved = try await ReviewWebTests.post(
                client, "/items/\(item)/resolve", cookie: alice, [("csrf_token", aliceCSRF), ("resolution", "moved")])
            #expect(moved.status == .seeOther)

            let bob = try await ReviewWebTests.login(client, name: "bob")
            let (_, seen) = try await Self.get(client, "/items/\(item)", cookie: bob)
            let approveForm = try Self.hiddenFields(of: "approve-form", in: seen)
            let rejectForm = try Self.hiddenFields(of: "reject-form", in: seen)
            #expect(approveForm.contains { $0 == ("pending_resolution", "moved") }, "the page names what it shows")
            #expect(rejectForm.contains { $0 == ("pending_resolution", "moved") })

            let withdrawn = try await ReviewWebTests.post(
                client, "/items/\(item)/reject", cookie: alice, [("csrf_token", aliceCSRF), ("note", "withdrawn")])
            #expect(withdrawn.status == .seeOther)
            let granted = try await ReviewWebTests.post(
                client, "/items/\(item)/resolve", cookie: alice, [("csrf_token", aliceCSRF), ("resolution", "granted")])
            #expect(granted.status == .seeOther)

            let changed = t.text("error.decision_changed", [
                "id": String(item), "resolution": t.resolution(.granted), "name": "alice",
            ])
            let approved = try await ReviewWebTests.post(client, "/items/\(item)/approve", cookie: bob, approveForm)
            #expect(approved.status == .conflict, "the decision changed since Bob's page: it must not be approved")
            #expect(String(buffer: approved.body).contains(changed), "\(String(buffer: approved.body))")
            let rejected = try await ReviewWebTests.post(
                client, "/items/\(item)/reject", cookie: bob, rejectForm + [("note", "a move is wrong here")])
            #expect(rejected.status == .conflict, "nor rejected")
            #expect(try Self.outbox(url).isEmpty)

            let (_, fresh) = try await Self.get(client, "/items/\(item)", cookie: bob)
            let approvedNow = try await ReviewWebTests.post(
                client, "/items/\(item)/approve", cookie: bob, try Self.hiddenFields(of: "approve-form", in: fresh))
            #expect(approvedNow.status == .seeOther)
        }
        #expect(try Self.outbox(url) == ["t-w1 grant to=u4 from=-"])
    }

    @Test func anotherPersonRejectsWithAReasonAndTheItemIsOpenAgain() async throws {
        let item = try id("t-x1")
        let threshold = try #require(ApprovalThreshold(parsing: "CNY=648"))
        _ = try ReviewDecisions(connection: connection, approval: threshold, judgement: .asStored)
            .resolve(id: item, resolution: .granted, by: "alice", note: "looks missed")
        try await withApp(approval: threshold) { client in
            let bob = try await ReviewWebTests.login(client, name: "bob")
            let csrf = try await ReviewWebTests.csrf(client, cookie: bob)
            let noReason = try await ReviewWebTests.post(client, "/items/\(item)/reject", cookie: bob, [("csrf_token", csrf)])
            #expect(noReason.status == .badRequest)
            let rejected = try await ReviewWebTests.post(
                client, "/items/\(item)/reject", cookie: bob, [("csrf_token", csrf), ("note", "delivered on the 21st")])
            #expect(rejected.status == .seeOther)
            let (_, page) = try await Self.get(client, "/items/\(item)", cookie: bob, language: "zh-Hans")
            #expect(page.contains("驳回了处理") && page.contains("delivered on the 21st"), "\(page)")
        }
        #expect(try statuses()["t-x1"] == "open")
        #expect(try outboxRows() == 0)
    }
}
