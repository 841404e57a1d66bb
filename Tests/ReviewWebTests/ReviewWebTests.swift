import Foundation
import Hummingbird
import HummingbirdTesting
import Postgres
@testable import Reconciliation
import ReviewWeb
import TestSupport
import Testing

/// Every page and action of `reconcile serve` through hummingbird's testing client, against a
/// real database seeded with `ReviewFixtures`.
@Suite("Review web pages")
struct ReviewWebTests {
    static let token = "test-token-0123456789abcdef"

    let database: TestDatabase
    let connection: Connection
    let ids: [String: Int64]

    init() throws {
        (database, connection) = try TestDatabase.migrated("reviewweb")
        ids = try ReviewFixtures.seed(on: connection)
    }

    func id(_ transaction: String) throws -> Int64 { try #require(ids[transaction]) }

    func withApp(_ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let application = try buildApplication(configuration: ReviewWebConfiguration(
            host: "127.0.0.1", port: 0, databaseURL: database.url, token: Secret(Self.token), judgement: .asStored))
        try await application.test(.router) { client in try await test(client) }
    }

    // MARK: Helpers

    static let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]

    static func encode(_ fields: [(String, String)]) -> ByteBuffer {
        let allowed = CharacterSet.alphanumerics
        return ByteBuffer(string: fields.map {
            "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }.joined(separator: "&"))
    }

    /// Logs in as `name`; returns the `Cookie` header value.
    static func login(_ client: any TestClientProtocol, name: String = "alice") async throws -> String {
        let response = try await client.execute(
            uri: "/login", method: .post, headers: form, body: encode([("name", name), ("token", token), ("next", "/")]))
        #expect(response.status == .seeOther)
        let setCookie = try #require(response.headers[.setCookie])
        return String(try #require(setCookie.split(separator: ";").first))
    }

    static func get(_ client: any TestClientProtocol, _ uri: String, cookie: String) async throws -> TestResponse {
        try await client.execute(uri: uri, method: .get, headers: [.cookie: cookie])
    }

    /// The page at `uri`, which must answer 200.
    static func page(
        _ client: any TestClientProtocol, _ uri: String, cookie: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> String {
        let response = try await get(client, uri, cookie: cookie)
        #expect(response.status == .ok, sourceLocation: sourceLocation)
        return String(buffer: response.body)
    }

    static func post(
        _ client: any TestClientProtocol, _ uri: String, cookie: String, _ fields: [(String, String)]
    ) async throws -> TestResponse {
        var headers = form
        headers[.cookie] = cookie
        return try await client.execute(uri: uri, method: .post, headers: headers, body: encode(fields))
    }

    /// The CSRF token the pages embed in their forms.
    static func csrf(_ client: any TestClientProtocol, cookie: String) async throws -> String {
        let page = String(buffer: try await get(client, "/", cookie: cookie).body)
        let marker = "name=\"csrf_token\" value=\""
        let start = try #require(page.range(of: marker)).upperBound
        return String(page[start...].prefix { $0 != "\"" })
    }

    func status(_ item: Int64) throws -> String {
        try connection.query("SELECT status FROM reconcile.review_items WHERE id = $1", [item])[0].decode(String.self, at: 0)
    }

    func outboxRows(_ item: Int64) throws -> Int {
        try connection.query("SELECT count(*) FROM reconcile.action_outbox WHERE review_item_id = $1", [item])[0]
            .decode(Int.self, at: 0)
    }

    // MARK: Login

    @Test(arguments: ["/", "/items/1", "/runs", "/export.csv", "/runs/1/report"])
    func everyPageRedirectsToLoginWithoutASession(path: String) async throws {
        try await withApp { client in
            let response = try await client.execute(uri: path, method: .get)
            #expect(response.status == .seeOther)
            #expect(response.headers[.location]?.hasPrefix("/login?next=") == true)
        }
    }

    @Test func actionsWithoutASessionRedirectToLoginAndChangeNothing() async throws {
        let item = try id("t-m1")
        try await withApp { client in
            let response = try await client.execute(
                uri: "/items/\(item)/claim", method: .post, headers: Self.form, body: Self.encode([("csrf_token", "x")]))
            #expect(response.status == .seeOther)
            #expect(response.headers[.location]?.hasPrefix("/login") == true)
        }
        #expect(try status(item) == "open")
    }

    @Test func theLoginPageRendersAForm() async throws {
        try await withApp { client in
            let response = try await client.execute(uri: "/login?next=/items/3", method: .get)
            #expect(response.status == .ok)
            let body = String(buffer: response.body)
            #expect(body.contains("<form method=\"post\" action=\"/login\">"))
            #expect(body.contains("value=\"/items/3\""))
            #expect(response.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
        }
    }

    @Test func aWrongTokenIsRefused() async throws {
        try await withApp { client in
            let response = try await client.execute(
                uri: "/login", method: .post, headers: Self.form,
                body: Self.encode([("name", "mallory"), ("token", "test-token-0123456789abcdeX")]))
            #expect(response.status == .unauthorized)
            #expect(response.headers[.setCookie] == nil)
            let body = String(buffer: response.body)
            #expect(body.contains("That token is not right."))
            #expect(!body.contains(Self.token))
        }
    }

    @Test func loginSetsAStrictHttpOnlyCookieAndGoesWhereAsked() async throws {
        try await withApp { client in
            let response = try await client.execute(
                uri: "/login", method: .post, headers: Self.form,
                body: Self.encode([("name", "alice"), ("token", Self.token), ("next", "/runs")]))
            #expect(response.status == .seeOther)
            #expect(response.headers[.location] == "/runs")
            let cookie = try #require(response.headers[.setCookie])
            #expect(cookie.hasPrefix("reconcile_session="))
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/"))
            // An open redirect is not possible through `next`.
            let away = try await client.execute(
                uri: "/login", method: .post, headers: Self.form,
                body: Self.encode([("name", "alice"), ("token", Self.token), ("next", "//evil.example/")]))
            #expect(away.headers[.location] == "/")
        }
    }

    @Test func logoutEndsTheSession() async throws {
        try await withApp { client in
            let cookie = try await Self.login(client)
            let csrf = try await Self.csrf(client, cookie: cookie)
            let response = try await Self.post(client, "/logout", cookie: cookie, [("csrf_token", csrf)])
            #expect(response.status == .seeOther)
            #expect(try await Self.get(client, "/", cookie: cookie).status == .seeOther)
        }
    }

    @Test func aLoginLinkWorksOnceAndNeedsNoToken() async throws {
        try await withApp { client in
            let cookie = try await Self.login(client)
            let csrf = try await Self.csrf(client, cookie: cookie)
            let created = try await Self.post(client, "/login-links", cookie: cookie, [("csrf_token", csrf), ("next", "/runs")])
            #expect(created.status == .created)
            let path = String(buffer: created.body).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(path.hasPrefix("/login/ticket/"))
            let redeemed = try await client.execute(uri: path, method: .get)
            #expect(redeemed.status == .seeOther && redeemed.headers[.location] == "/runs")
            let newCookie = String(try #require(redeemed.headers[.setCookie]?.split(separator: ";").first))
            #expect(try await Self.get(client, "/runs", cookie: newCookie).status == .ok)
            #expect(try await client.execute(uri: path, method: .get).status == .unauthorized)
            // Creating a link is a POST like any other: it needs the CSRF token.
            #expect(try await Self.post(client, "/login-links", cookie: cookie, [("csrf_token", "nope")]).status == .forbidden)
        }
    }

    // MARK: Pages

    @Test func theQueueListsItemsWithCountsAndEscapesClientValues() async throws {
        try await withApp { client in
            let cookie = try await Self.login(client)
            let body = try await Self.page(client, "/", cookie: cookie)
            #expect(body.contains("7 items"))
            #expect(body.contains("Missed delivery <b>2</b>"))
            #expect(body.contains("t-w1"))
            #expect(!body.contains("t-a1"), "auto-resolved items are not in the working set")
            #expect(body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
            #expect(!body.contains("<script>alert(1)"))
            #expect(!body.contains("<img src=x"))
        }
    }

    @Test func theQueueFiltersAndPages() async throws {
        try await withApp { client in
            let cookie = try await Self.login(client)
            let body = try await Self.page(client, "/?status=all&kind=missed_delivery", cookie: cookie)
            #expect(body.contains("3 items") && body.contains("t-a1") && !body.contains("t-w1"))
            let user = try await Self.page(client, "/?user=u1", cookie: cookie)
            #expect(user.contains("2 items"))
            let severity = try await Self.page(client, "/?severity=low", cookie: cookie)
            #expect(severity.contains("Nothing matches this filter."))
        }
    }

    @Test func theItemPageShowsEvidenceHistoryAndActions() async throws {
        let item = try id("t-w1")
        try await withApp { client in
            let cookie = try await Self.login(client)
            let body = try await Self.page(client, "/items/\(item)", cookie: cookie)
            #expect(body.contains("<code id=\"transaction-id\">t-w1</code>"))
            #expect(body.contains("iPhone14,5 · iOS 17.2 · app 3.1"))
            #expect(body.contains("Delivery ledger") && body.contains("u5"))
            #expect(body.contains("Buyer: <b>u4</b>"))
            #expect(body.contains("detected the discrepancy"))
            #expect(body.contains("action=\"/items/\(item)/resolve\""))
            #expect(body.contains("<option value=\"moved\" selected>"))
            #expect(body.contains("Next in queue →"))
            #expect(try await Self.get(client, "/items/999999", cookie: cookie).status == .notFound)
        }
    }

    @Test func hostileIdsAreInertOnTheItemPage() async throws {
        let item = try id("t-x1")
        try await withApp { client in
            let cookie = try await Self.login(client)
            let body = try await Self.page(client, "/items/\(item)", cookie: cookie)
            #expect(body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
            #expect(body.contains("&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"))
            #expect(!body.contains("<script"))
            #expect(!body.contains("<img"))
        }
    }

    @Test func theRunsPageLinksToEachReport() async throws {
        let directory = Scratch.root.appendingPathComponent("reviewweb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("<!DOCTYPE html><title>Run report</title>".utf8).write(to: directory.appendingPathComponent("report.html"))
        try connection.execute("UPDATE reconcile.runs SET report_dir = $1", [directory.path])
        let run = try connection.query("SELECT max(id) FROM reconcile.runs")[0].decode(Int64.self, at: 0)
        try await withApp { client in
            let cookie = try await Self.login(client)
            let runs = try await Self.page(client, "/runs", cookie: cookie)
            #expect(runs.contains("href=\"/runs/\(run)/report\""))
            let report = try await Self.get(client, "/runs/\(run)/report", cookie: cookie)
            #expect(report.status == .ok)
            #expect(String(buffer: report.body).contains("Run report"))
            #expect(report.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
            #expect(try await Self.get(client, "/runs/999/report", cookie: cookie).status == .notFound)
        }
    }

    @Test func exportReturnsCSVOfTheCurrentFilter() async throws {
        try await withApp { client in
            let cookie = try await Self.login(client)
            let response = try await Self.get(client, "/export.csv?kind=missed_delivery", cookie: cookie)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/csv") == true)
            #expect(response.headers[.contentDisposition]?.contains("attachment") == true)
            let lines = String(buffer: response.body).split(separator: "\r\n")
            #expect(lines.count == 3)
            #expect(lines[0].hasPrefix("id,status,kind"))
            #expect(lines.dropFirst().allSatisfy { $0.contains("missed_delivery") })
        }
    }

    // MARK: Actions

    @Test func claimResolveAndDismissGoThroughTheService() async throws {
        let claimed = try id("t-m1"), resolved = try id("t-r1"), dismissed = try id("t-d1")
        try await withApp { client in
            let cookie = try await Self.login(client)
            let csrf = try await Self.csrf(client, cookie: cookie)
            let claim = try await Self.post(client, "/items/\(claimed)/claim", cookie: cookie, [("csrf_token", csrf)])
            #expect(claim.status == .seeOther && claim.headers[.location] == "/items/\(claimed)")
            let page = try await Self.page(client, "/items/\(claimed)", cookie: cookie)
            #expect(page.contains("Claimed item \(claimed) for alice"))

            let fields = [("csrf_token", csrf), ("resolution", "revoked"), ("note", "refund confirmed")]
            #expect(try await Self.post(client, "/items/\(resolved)/resolve", cookie: cookie, fields).status == .seeOther)
            // The same click again (a double submit): success, and still one outbox row.
            #expect(try await Self.post(client, "/items/\(resolved)/resolve", cookie: cookie, fields).status == .seeOther)

            let dismiss = try await Self.post(
                client, "/items/\(dismissed)/dismiss", cookie: cookie, [("csrf_token", csrf), ("note", "QA account")])
            #expect(dismiss.status == .seeOther)
            let refused = try await Self.post(
                client, "/items/\(dismissed)/resolve", cookie: cookie, [("csrf_token", csrf), ("resolution", "revoked")])
            #expect(refused.status == .conflict)
            #expect(String(buffer: refused.body).contains("is already dismissed by alice"))
        }
        #expect(try status(claimed) == "in_review")
        #expect(try status(resolved) == "resolved")
        #expect(try outboxRows(resolved) == 1)
        #expect(try status(dismissed) == "dismissed")
        #expect(try outboxRows(dismissed) == 0)
        let actor = try connection.query(
            "SELECT actor FROM reconcile.review_events WHERE review_item_id = $1 ORDER BY id DESC LIMIT 1", [resolved]
        )[0].decode(String.self, at: 0)
        #expect(actor == "alice")
    }

    @Test(arguments: [[("csrf_token", "forged")], [("note", "no token at all")], [("csrf_token", "")]])
    func aMissingOrWrongCSRFTokenIs403(fields: [(String, String)]) async throws {
        let item = try id("t-m1")
        try await withApp { client in
            let cookie = try await Self.login(client)
            for action in ["claim", "resolve", "dismiss"] {
                let response = try await Self.post(
                    client, "/items/\(item)/\(action)", cookie: cookie, fields + [("resolution", "granted")])
                #expect(response.status == .forbidden)
            }
        }
        #expect(try status(item) == "open")
        #expect(try outboxRows(item) == 0)
    }

    @Test func aCrossSitePostIsRefusedButTheProxiedOriginIsAccepted() async throws {
        let item = try id("t-m1")
        try await withApp { client in
            let cookie = try await Self.login(client)
            let csrf = try await Self.csrf(client, cookie: cookie)
            var headers = Self.form
            headers[.cookie] = cookie
            headers[.origin] = "https://evil.example"
            let response = try await client.execute(
                uri: "/items/\(item)/claim", method: .post, headers: headers, body: Self.encode([("csrf_token", csrf)]))
            #expect(response.status == .forbidden)
            // Behind a proxy that passes the public host on, the same origin is accepted.
            headers[.init("X-Forwarded-Host")!] = "evil.example"
            let proxied = try await client.execute(
                uri: "/items/\(item)/claim", method: .post, headers: headers, body: Self.encode([("csrf_token", csrf)]))
            #expect(proxied.status == .seeOther)
        }
        #expect(try status(item) == "in_review")
    }

    @Test func takingOverAClaimNeedsTheForceButton() async throws {
        let item = try id("t-m1")
        _ = try ReviewDecisions(connection: connection, approval: .none, judgement: .asStored).claim(id: item, by: "bob")
        try await withApp { client in
            let cookie = try await Self.login(client)
            let csrf = try await Self.csrf(client, cookie: cookie)
            let page = try await Self.page(client, "/items/\(item)", cookie: cookie)
            #expect(page.contains("Take over"))
            let refused = try await Self.post(client, "/items/\(item)/claim", cookie: cookie, [("csrf_token", csrf)])
            #expect(refused.status == .conflict)
            #expect(String(buffer: refused.body).contains("is claimed by bob"))
            let forced = try await Self.post(client, "/items/\(item)/claim", cookie: cookie, [("csrf_token", csrf), ("force", "1")])
            #expect(forced.status == .seeOther)
        }
        let assignee = try connection.query("SELECT assignee FROM reconcile.review_items WHERE id = $1", [item])[0]
            .decode(String.self, at: 0)
        #expect(assignee == "alice")
    }
}
