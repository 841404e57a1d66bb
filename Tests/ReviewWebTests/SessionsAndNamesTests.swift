import Foundation
import Hummingbird
import HummingbirdTesting
import Postgres
@testable import Reconciliation
import ReviewWeb
import TestSupport
import Testing

/// Issue 36 on the pages, over real sockets: logging out ends the sessions its login links made
/// (item 19); nobody logs in under a name the product acts under (item 20); a decision on a page
/// of a server started without `RECONCILE_APPROVAL_ABOVE` applies the recorded threshold (item 4).
@Suite("Review pages: login links end with their logout, reserved names, the recorded threshold")
struct SessionsAndNamesTests {
    let database: TestDatabase
    let connection: Connection
    let ids: [String: Int64]

    init() throws {
        (database, connection) = try TestDatabase.migrated("reviewweb_sessions")
        ids = try ReviewFixtures.seed(on: connection)
    }

    func withApp(_ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let application = try buildApplication(configuration: ReviewWebConfiguration(
            host: "127.0.0.1", port: 0, databaseURL: database.url, token: Secret(ReviewWebTests.token), judgement: .asStored))
        try await application.test(.live) { client in try await test(client) }
    }

    /// A login link redeemed in `client`'s other browser; returns its session's cookie.
    static func linked(_ client: any TestClientProtocol, from cookie: String) async throws -> String {
        let path = try await link(client, from: cookie)
        let redeemed = try await client.execute(uri: path, method: .get, headers: [:])
        #expect(redeemed.status == .seeOther)
        return String(try #require(redeemed.headers[.setCookie]?.split(separator: ";").first))
    }

    static func link(_ client: any TestClientProtocol, from cookie: String) async throws -> String {
        let csrf = try await ReviewWebTests.csrf(client, cookie: cookie)
        let created = try await ReviewWebTests.post(client, "/login-links", cookie: cookie, [("csrf_token", csrf)])
        #expect(created.status == .created)
        return String(buffer: created.body).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func logout(_ client: any TestClientProtocol, _ cookie: String) async throws {
        let csrf = try await ReviewWebTests.csrf(client, cookie: cookie)
        #expect(try await ReviewWebTests.post(client, "/logout", cookie: cookie, [("csrf_token", csrf)]).status == .seeOther)
    }

    static func signedIn(_ client: any TestClientProtocol, _ cookie: String) async throws -> Bool {
        try await ReviewWebTests.get(client, "/runs", cookie: cookie).status == .ok
    }

    /// The headless browser's session (a link's), and the one its own link made, end when the
    /// person logs out; so does a link not used yet. Logging out of a linked session ends only it.
    @Test func loggingOutEndsTheSessionsItsLoginLinksMade() async throws {
        try await withApp { client in
            let login = try await ReviewWebTests.login(client)
            let headless = try await Self.linked(client, from: login)
            let second = try await Self.linked(client, from: headless)
            let unused = try await Self.link(client, from: login)
            #expect(try await Self.signedIn(client, headless))
            #expect(try await Self.signedIn(client, second))

            try await Self.logout(client, login)
            #expect(try await !Self.signedIn(client, login))
            #expect(try await !Self.signedIn(client, headless), "the link's session ended with the logout")
            #expect(try await !Self.signedIn(client, second), "and the one its own link made")
            #expect(try await client.execute(uri: unused, method: .get, headers: [:]).status == .unauthorized)

            let again = try await ReviewWebTests.login(client)
            let other = try await Self.linked(client, from: again)
            try await Self.logout(client, other)
            #expect(try await !Self.signedIn(client, other))
            #expect(try await Self.signedIn(client, again), "logging out of a linked session ends only it")
        }
    }

    @Test(arguments: ["receiver", " Receiver ", "RECEIVER", "policy:routine", "reconcile"])
    func theProductsOwnNamesCannotLogIn(name: String) async throws {
        try await withApp { client in
            let response = try await client.execute(
                uri: "/login", method: .post, headers: ReviewWebTests.form,
                body: ReviewWebTests.encode([("name", name), ("token", ReviewWebTests.token)]))
            #expect(response.status == .badRequest, "\(name)")
            #expect(response.headers[.setCookie] == nil)
        }
    }

    /// `serve` without the setting, a threshold recorded by another process: a ¥700 grant from the
    /// item page waits, and the bulk confirmation names the threshold in force.
    @Test func aPageDecisionAppliesTheRecordedThreshold() async throws {
        try connection.execute(
            """
            UPDATE reconcile.review_items SET currency = 'CNY',
                   amount_milli = CASE transaction_id WHEN 't-m1' THEN 6000 ELSE 700000 END
             WHERE kind = 'missed_delivery'
            """)
        try #require(ApprovalThreshold(parsing: "CNY=648")).record(on: connection, by: "run")
        let item = try #require(ids["t-x1"])
        let url = database.url
        try await withApp { client in
            let alice = try await ReviewWebTests.login(client, name: "alice")
            let (_, bulk) = try await ApprovalWebTests.get(client, "/bulk?kind=missed_delivery&all=1", cookie: alice)
            #expect(bulk.contains("648.00"), "the confirmation names the threshold in force: \(bulk)")
            let csrf = try await ReviewWebTests.csrf(client, cookie: alice)
            let decided = try await ReviewWebTests.post(
                client, "/items/\(item)/resolve", cookie: alice, [("csrf_token", csrf), ("resolution", "granted")])
            #expect(decided.status == .seeOther)
            #expect(try ApprovalWebTests.statuses(url)["t-x1"] == "awaiting_approval")
            #expect(try ApprovalWebTests.outboxRows(url) == 0)
        }
    }
}
