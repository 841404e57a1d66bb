import Foundation
import Glibc
import Hummingbird
import HummingbirdTesting
import Logging
import Postgres
@testable import Reconciliation
import ReviewWeb
import Synchronization
import TestSupport
import Testing

/// Issue 14 against the pages: bounded numbers, error pages, NUL, login back-off and sessions,
/// per-scalar escaping of hostile ids, a stalled database, idle connections.
@Suite("Review web pages under attack")
struct HardeningTests {
    let database: TestDatabase
    let connection: Connection
    let ids: [String: Int64]

    init() throws {
        (database, connection) = try TestDatabase.migrated("reviewhard")
        ids = try ReviewFixtures.seed(on: connection)
    }

    func configuration(logger: Logger = Logger(label: "test")) -> ReviewWebConfiguration {
        ReviewWebConfiguration(
            host: "127.0.0.1", port: 0, databaseURL: database.url, token: Secret(ReviewWebTests.token), judgement: .asStored, logger: logger)
    }

    func withApp(
        _ configuration: ReviewWebConfiguration? = nil, _ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let application = try buildApplication(configuration: configuration ?? self.configuration())
        try await application.test(.router) { client in try await test(client) }
    }

    static func expectErrorPage(_ response: TestResponse, _ status: HTTPResponse.Status, _ context: String) {
        #expect(response.status == status, "\(context)")
        #expect(response.headers[.contentType]?.hasPrefix("text/html") == true, "\(context): an HTML page")
        #expect(response.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true, "\(context): CSP")
        #expect(response.headers[.xContentTypeOptions] == "nosniff", "\(context)")
        #expect(String(buffer: response.body).contains("<!DOCTYPE html>"), "\(context)")
    }

    // MARK: 1. Numbers from a person

    @Test(arguments: ["9223372036854775807", "1000001", "99999999999999999999999"])
    func aHugePageNumberIsA400PageNotATrap(page: String) async throws {
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            let response = try await ReviewWebTests.get(client, "/?page=\(page)", cookie: cookie)
            Self.expectErrorPage(response, .badRequest, "page \(page)")
            // The server still answers.
            #expect(try await ReviewWebTests.get(client, "/?page=2", cookie: cookie).status == .ok)
        }
    }

    @Test func anItemIdBeyondInt64IsA404Page() async throws {
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            Self.expectErrorPage(
                try await ReviewWebTests.get(client, "/items/9223372036854775808", cookie: cookie), .notFound, "item id")
        }
    }

    // MARK: 5. Errors and NUL

    @Test func errorResponsesAreHTMLPagesWithTheSecurityHeaders() async throws {
        let item = try #require(ids["t-m1"])
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            Self.expectErrorPage(try await ReviewWebTests.get(client, "/no/such/page", cookie: cookie), .notFound, "404")
            Self.expectErrorPage(
                try await ReviewWebTests.post(client, "/items/\(item)/claim", cookie: cookie, [("csrf_token", "forged")]),
                .forbidden, "403")
            let huge = String(repeating: "x", count: 70 * 1024)
            Self.expectErrorPage(
                try await ReviewWebTests.post(client, "/items/\(item)/dismiss", cookie: cookie, [("note", huge)]),
                .contentTooLarge, "413")
        }
    }

    @Test(arguments: ["/?user=%00", "/?transaction=a%00b", "/export.csv?product=%00", "/?page=1&since=%00"])
    func aNULInTheQueryIsA400(uri: String) async throws {
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            Self.expectErrorPage(try await ReviewWebTests.get(client, uri, cookie: cookie), .badRequest, uri)
        }
    }

    @Test func aNULInAFormIsA400AndChangesNothing() async throws {
        let item = try #require(ids["t-m1"])
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            let csrf = try await ReviewWebTests.csrf(client, cookie: cookie)
            let response = try await ReviewWebTests.post(
                client, "/items/\(item)/dismiss", cookie: cookie, [("csrf_token", csrf), ("note", "a\u{0}b")])
            Self.expectErrorPage(response, .badRequest, "NUL in a note")
        }
        #expect(try connection.query("SELECT status FROM reconcile.review_items WHERE id = $1", [item])[0]
            .decode(String.self, at: 0) == "open")
    }

    @Test func a500IsAPageAndIsLoggedWithItsCause() async throws {
        let records = LogRecords()
        var configuration = configuration(logger: records.logger())
        // Nothing listens there: every database call fails.
        configuration.databaseURL = "postgresql://nobody@127.0.0.1:1/none?connect_timeout=2"
        try await withApp(configuration) { client in
            let cookie = try await ReviewWebTests.login(client)
            Self.expectErrorPage(try await ReviewWebTests.get(client, "/", cookie: cookie), .internalServerError, "500")
        }
        let failures = records.messages.filter { $0.message == "request failed" }
        #expect(failures.count == 1)
        #expect(failures.first?.metadata["error"]?.contains("127.0.0.1") == true, "\(failures)")
    }

    // MARK: 4. Login

    @Test func wrongTokensMakeTheClientWaitEvenWithTheRightOne() async throws {
        let records = LogRecords()
        var configuration = configuration(logger: records.logger())
        // Long enough that a loaded machine cannot let the wait run out between two requests.
        configuration.loginFirstWait = 120
        try await withApp(configuration) { client in
            for _ in 0..<5 {
                let response = try await client.execute(
                    uri: "/login", method: .post, headers: ReviewWebTests.form,
                    body: ReviewWebTests.encode([("name", "mallory"), ("token", "wrong-token-0123456789abcdef")]))
                #expect(response.status == .unauthorized)
            }
            let response = try await client.execute(
                uri: "/login", method: .post, headers: ReviewWebTests.form,
                body: ReviewWebTests.encode([("name", "mallory"), ("token", ReviewWebTests.token)]))
            #expect(response.status == .tooManyRequests)
            #expect(response.headers[.setCookie] == nil)
            #expect(response.headers[.retryAfter] != nil)
        }
        let refusals = records.messages.filter { $0.message == "login refused" }
        #expect(refusals.count == 6)
        #expect(refusals.allSatisfy { $0.metadata["client.address"] != nil })
    }

    @Test func loggingInEndsTheCallersPreviousSession() async throws {
        try await withApp { client in
            let first = try await ReviewWebTests.login(client)
            var headers = ReviewWebTests.form
            headers[.cookie] = first
            let response = try await client.execute(
                uri: "/login", method: .post, headers: headers,
                body: ReviewWebTests.encode([("name", "alice"), ("token", ReviewWebTests.token), ("next", "/")]))
            #expect(response.status == .seeOther)
            let second = String(try #require(response.headers[.setCookie]?.split(separator: ";").first))
            #expect(second != first)
            #expect(try await ReviewWebTests.get(client, "/", cookie: first).status == .seeOther)
            #expect(try await ReviewWebTests.get(client, "/", cookie: second).status == .ok)
        }
    }

    /// Sessions of 8 hours at most and 1 hour idle, on a clock the test moves.
    func eightHourSessions() -> (ReviewWebConfiguration, TestClock) {
        var configuration = configuration()
        let clock = TestClock()
        configuration.clock = { clock.now }
        configuration.sessionAbsoluteLifetime = 8 * 3600
        configuration.sessionIdleLifetime = 3600
        return (configuration, clock)
    }

    /// Uses the session every 50 minutes for 7 h 30 min, each page answered.
    static func useEvery50Minutes(_ client: any TestClientProtocol, cookie: String, clock: TestClock) async throws {
        for _ in 0..<9 {
            clock.advance(by: 50 * 60)
            #expect(try await ReviewWebTests.get(client, "/runs", cookie: cookie).status == .ok)
        }
    }

    /// The idle lifetime is hours; only the absolute lifetime can end this session.
    @Test func aSessionEndsAtItsAbsoluteLifetime() async throws {
        let (configuration, clock) = eightHourSessions()
        try await withApp(configuration) { client in
            let cookie = try await ReviewWebTests.login(client)
            // Used every 50 minutes, the session outlives its idle lifetime many times over…
            try await Self.useEvery50Minutes(client, cookie: cookie, clock: clock)
            // …and still answers a minute before its absolute lifetime ends, 8 hours after login…
            clock.advance(by: 29 * 60)
            #expect(try await ReviewWebTests.get(client, "/runs", cookie: cookie).status == .ok)
            // …and not at the end, though it was used a minute ago.
            clock.advance(by: 60)
            #expect(try await ReviewWebTests.get(client, "/runs", cookie: cookie).status == .seeOther)
        }
    }

    /// A login link gives the other browser a session that ends when the session that made it
    /// ends. Were it a fresh session with a fresh absolute lifetime, a link made every few hours
    /// from the last link's session would keep one login alive for ever.
    @Test func aLoginLinksSessionEndsWhenTheSessionThatMadeItEnds() async throws {
        let (configuration, clock) = eightHourSessions()
        try await withApp(configuration) { client in
            let login = try await ReviewWebTests.login(client)
            try await Self.useEvery50Minutes(client, cookie: login, clock: clock)
            // 7 h 50 min after the login, a link from its session, redeemed in another browser.
            clock.advance(by: 20 * 60)
            let csrf = try await ReviewWebTests.csrf(client, cookie: login)
            let link = try await ReviewWebTests.post(client, "/login-links", cookie: login, [("csrf_token", csrf)])
            let path = String(buffer: link.body).trimmingCharacters(in: .whitespacesAndNewlines)
            let redeemed = try await client.execute(uri: path, method: .get, headers: [:])
            let linked = String(try #require(redeemed.headers[.setCookie]?.split(separator: ";").first))
            clock.advance(by: 9 * 60)
            #expect(try await ReviewWebTests.get(client, "/runs", cookie: linked).status == .ok)
            // 8 hours after the login both sessions have ended, though the linked one is 10 minutes old.
            clock.advance(by: 60)
            #expect(try await ReviewWebTests.get(client, "/runs", cookie: linked).status == .seeOther)
            #expect(try await ReviewWebTests.get(client, "/runs", cookie: login).status == .seeOther)
        }
    }

    @Test func aSessionEndsAfterItsIdleLifetime() async throws {
        var configuration = configuration()
        let clock = TestClock()
        configuration.clock = { clock.now }
        configuration.sessionIdleLifetime = 3600
        try await withApp(configuration) { client in
            let cookie = try await ReviewWebTests.login(client)
            clock.advance(by: 3599)
            #expect(try await ReviewWebTests.get(client, "/runs", cookie: cookie).status == .ok)
            clock.advance(by: 3601)
            #expect(try await ReviewWebTests.get(client, "/runs", cookie: cookie).status == .seeOther)
        }
    }

    @Test(arguments: [
        "eve\u{202E}gnp.exe", "a\u{2066}b", "zero\u{200B}width", "\u{600}x", "reconcile", "Reconcile",
        String(repeating: "e\u{301}", count: 150),
    ])
    func unsafeNamesAreRefused(name: String) async throws {
        try await withApp { client in
            let response = try await client.execute(
                uri: "/login", method: .post, headers: ReviewWebTests.form,
                body: ReviewWebTests.encode([("name", name), ("token", ReviewWebTests.token)]))
            #expect(response.status == .badRequest)
            #expect(response.headers[.setCookie] == nil)
        }
    }

    @Test(arguments: ["aaaaaaaaaaaaaaaa", "abababababababababababab", "short-token"])
    func aGuessableTokenIsRefusedAtStart(token: String) throws {
        var configuration = configuration()
        configuration.token = Secret(token)
        #expect(throws: WeakTokenError.self) { _ = try buildApplication(configuration: configuration) }
    }

    // MARK: 2. Escaping per scalar

    /// Each payload puts a `<` or `"` in one grapheme cluster with its neighbour, which a
    /// per-`Character` escaper lets through.
    static let clusterPayloads = [
        "\u{600}<meta http-equiv=refresh content=0;url=//evil.example>",
        "x\"\u{301} autofocus onfocus=alert(1) x=\"",
        "\u{600}<img src=x onerror=alert(3)>",
    ]

    @Test func combiningCharactersCannotCarryATagOntoThePages() async throws {
        var planted: [Int64] = []
        for (index, payload) in Self.clusterPayloads.enumerated() {
            planted.append(try connection.query(
                """
                INSERT INTO reconcile.review_items
                    (fingerprint, kind, severity, status, transaction_id, user_id, product_id, suggested_action,
                     evidence, first_seen_run, last_seen_run)
                SELECT 'hostile:' || $1::text, 'missed_delivery', 'high', 'open', 't-h' || $1::text, $2, $2, 'grant',
                       '{}'::jsonb, id, id FROM reconcile.runs ORDER BY id LIMIT 1
                RETURNING id
                """, [String(index), payload])[0].decode(Int64.self, at: 0))
        }
        let items = planted
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            var pages = [String(buffer: try await ReviewWebTests.get(client, "/", cookie: cookie).body)]
            for id in items {
                pages.append(String(buffer: try await ReviewWebTests.get(client, "/items/\(id)", cookie: cookie).body))
            }
            for payload in Self.clusterPayloads {
                let query = "/?user=" + (payload.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
                pages.append(String(buffer: try await ReviewWebTests.get(client, query, cookie: cookie).body))
                let login = "/login?next=/" + (payload.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
                pages.append(String(buffer: try await client.execute(uri: login, method: .get).body))
            }
            for page in pages {
                for tag in ["<meta http-equiv", "<img src=x", "\"\u{301} autofocus"] {
                    #expect(!Self.contains(page, tag), "a page holds \(tag.debugDescription)")
                }
            }
        }
    }

    /// Substring search per scalar (String.contains compares clusters and would miss the attack).
    static func contains(_ page: String, _ needle: String) -> Bool {
        let haystack = Array(page.unicodeScalars), pattern = Array(needle.unicodeScalars)
        guard pattern.count <= haystack.count else { return false }
        for start in 0...(haystack.count - pattern.count) where haystack[start..<(start + pattern.count)].elementsEqual(pattern) {
            return true
        }
        return false
    }

    // MARK: 5. report.html

    @Test func theReportIsServedWithAStrictCSP() async throws {
        let folder = Scratch.root.appendingPathComponent("hard-report-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("<!DOCTYPE html><p>report</p>".utf8).write(to: folder.appendingPathComponent("report.html"))
        let run = try connection.query(
            "INSERT INTO reconcile.runs (window_until, environment, status, report_dir) VALUES (now(), 'production', 'completed', $1) RETURNING id",
            [folder.path])[0].decode(Int64.self, at: 0)
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            let response = try await ReviewWebTests.get(client, "/runs/\(run)/report", cookie: cookie)
            #expect(response.status == .ok)
            let policy = response.headers[.contentSecurityPolicy] ?? ""
            #expect(policy.contains("base-uri 'none'") && policy.contains("form-action 'none'"), "\(policy)")
        }
    }

    // MARK: 3. A stalled database

    @Test func aLockedQueueGetsA503WithinBoundedConnectionsAndLoginStillAnswers() async throws {
        var configuration = configuration()
        configuration.maximumConnections = 2
        configuration.connectionWaitTimeout = 1
        configuration.statementTimeout = 2
        let url = database.url
        let cap = configuration.maximumConnections
        let fixture = try Self.pids([connection])
        let application = try buildApplication(configuration: configuration)
        try await application.test(.router) { client in
            let cookie = try await ReviewWebTests.login(client)
            let locker = try Connection(url: url)
            let observer = try Connection(url: url)
            try locker.execute("BEGIN")
            try locker.execute("LOCK TABLE reconcile.review_items IN ACCESS EXCLUSIVE MODE")
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await ReviewWebTests.get(client, "/", cookie: cookie).status }
                }
                // While every connection waits on the lock, the login page still answers.
                let login = try await client.execute(uri: "/login", method: .get)
                #expect(login.status == .ok)
                // The pages' own sessions: client backends of this database other than the
                // test's (autovacuum workers, busy on a loaded machine, are not the pages').
                let connections = try observer.query(
                    """
                    SELECT count(*) FROM pg_stat_activity
                    WHERE datname = current_database() AND backend_type = 'client backend'
                      AND pid <> ALL ($1::int[])
                    """, [Self.array(fixture + Self.pids([locker, observer]))]
                )[0].decode(Int.self, at: 0)
                #expect(connections <= cap, "\(connections) connections")
                var statuses: [HTTPResponse.Status] = []
                for try await status in group { statuses.append(status) }
                return statuses
            }
            try locker.execute("ROLLBACK")
            #expect(statuses.allSatisfy { $0 == .serviceUnavailable }, "\(statuses)")
            #expect(try await ReviewWebTests.get(client, "/", cookie: cookie).status == .ok)
        }
    }
}

extension HardeningTests {
    /// The backend pids of the test's own connections.
    static func pids(_ connections: [Connection]) throws -> [Int] {
        try connections.map { try $0.query("SELECT pg_backend_pid()")[0].decode(Int.self, at: 0) }
    }

    /// Integers as a PostgreSQL array literal.
    static func array(_ values: [Int]) -> String {
        "{" + values.map(String.init).joined(separator: ",") + "}"
    }

    /// A silent connection, and one that sends half a request head and stops, are both closed
    /// after the idle timeout (before: held open forever).
    @Test(arguments: ["", "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "])
    func anIdleOrSlowConnectionIsClosed(prefix: String) async throws {
        var configuration = configuration()
        configuration.idleTimeout = 1
        let application = try buildApplication(configuration: configuration)
        try await application.test(.live) { client in
            let port = try #require(client.port)
            let closed = try await onOwnThread { try Self.serverCloses(port: port, after: prefix, within: 8) }
            #expect(closed, "the server still held the connection after 8 s")
        }
    }

    /// Connects, sends `prefix`, then waits up to `seconds` for the server to close the socket.
    static func serverCloses(port: Int, after prefix: String, within seconds: Int) throws -> Bool {
        let socket = try LoopbackSocket.connect(port: port, timeout: seconds)
        defer { close(socket) }
        if !prefix.isEmpty {
            _ = prefix.withCString { send(socket, $0, strlen($0), 0) }
        }
        var buffer = [UInt8](repeating: 0, count: 512)
        let received = recv(socket, &buffer, buffer.count, 0)
        // 0: the server closed the connection; -1 with EAGAIN: it was still open at the deadline.
        return received == 0
    }
}

/// A log handler that keeps what it is given, for tests that check what was logged.
final class LogRecords: Sendable {
    struct Record: Sendable {
        let message: String
        let metadata: [String: String]
        var level: Logger.Level = .info
    }

    private let records = Mutex<[Record]>([])

    var messages: [Record] { records.withLock { $0 } }

    func logger() -> Logger {
        Logger(label: "test") { _ in Handler(records: self) }
    }

    func append(_ record: Record) { records.withLock { $0.append(record) } }

    struct Handler: LogHandler {
        let records: LogRecords
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var merged: [String: String] = [:]
            for (key, value) in metadata { merged[key] = "\(value)" }
            for (key, value) in event.metadata ?? [:] { merged[key] = "\(value)" }
            records.append(Record(message: "\(event.message)", metadata: merged, level: event.level))
        }
    }
}

/// A clock the tests move by hand, so a lifetime is tested without waiting it out.
final class TestClock: Sendable {
    private let time = Mutex(Date(timeIntervalSince1970: 1_800_000_000))

    var now: Date { time.withLock { $0 } }

    func advance(by seconds: TimeInterval) {
        time.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}
