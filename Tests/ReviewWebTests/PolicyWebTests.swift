import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Postgres
@testable import Reconciliation
@testable import ReviewWeb
import TestSupport
import Testing

/// What the policies decided, on the pages (SPEC section 17): the runs page lists each run's
/// decisions by rule, the item page names the rule that decided it, in both languages.
@Suite("Policies on the pages")
struct PolicyWebTests {
    @Test(arguments: [
        ("en", "Decided by policies", "routine-coin42: 1 (CN¥6.00)", "Resolved as granted by the policy routine-coin42 on "),
        ("zh-Hans", "策略自动处理", "routine-coin42：1 条（¥6.00）", "由策略 routine-coin42 于 "),
    ])
    func theRunsAndItemPagesShowWhatAPolicyDecided(
        _ language: String, _ heading: String, _ tally: String, _ decision: String
    ) async throws {
        let (database, connection) = try TestDatabase.migrated("policy_pages")
        let ids = try ReviewFixtures.seed(on: connection)
        try connection.execute("UPDATE reconcile.review_items SET amount_milli = 6000, currency = 'CNY'")
        let run = try connection.query(
            """
            INSERT INTO reconcile.runs (window_until, environment, status, finished_at)
            VALUES (now(), 'production', 'completed', now()) RETURNING id
            """)[0].decode(Int64.self, at: 0)
        let policies = try PolicyFile.parse("""
            rules:
              - name: routine-coin42
                when: {kind: missed_delivery, product: coin42, buyer_basis: uploader}
                decide: granted
                note: routine pack
            """)
        let outcome = try PolicyEngine(file: policies, approval: .none, judgement: .asStored, logger: Logger(label: "test")).apply(runID: run, on: connection)
        #expect(outcome.total == 1)
        let item = try #require(ids["t-m1"])

        let application = try buildApplication(configuration: ReviewWebConfiguration(
            host: "127.0.0.1", port: 0, databaseURL: database.url, token: Secret(ReviewWebTests.token), judgement: .asStored))
        try await application.test(.router) { client in
            let cookie = try await ReviewWebTests.login(client)
            let runs = try await ReviewWebTests.page(client, "/runs?lang=\(language)", cookie: cookie)
            #expect(runs.contains("<th>\(heading)</th>"), "\(runs)")
            let row = try #require(runs.components(separatedBy: "<tr>").first { $0.hasPrefix("<td>\(run)</td>") })
            #expect(row.contains("<div>\(tally)</div>"), "\(row)")
            let page = try await ReviewWebTests.page(client, "/items/\(item)?lang=\(language)", cookie: cookie)
            #expect(page.contains(decision), "\(page)")
            #expect(page.contains("policy:routine-coin42"), "the history names the actor")
        }
    }
}
