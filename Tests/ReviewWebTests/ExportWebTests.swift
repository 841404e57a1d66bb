import Foundation
import Glibc
import Hummingbird
import HummingbirdTesting
import Postgres
@testable import Reconciliation
import ReviewWeb
import TestSupport
import Testing

/// The queue's CSV export over a real server and a real database: streamed in chunks, the same
/// bytes as `reconcile review export`, and its connection freed when the client goes away.
@Suite("CSV export, streamed")
struct ExportWebTests {
    let database: TestDatabase
    let connection: Connection

    init() throws {
        (database, connection) = try TestDatabase.migrated("reviewexport")
        _ = try ReviewFixtures.seed(on: connection)
    }

    /// Adds `count` items with notes that need quoting, and some non-ASCII text, so chunk
    /// boundaries fall inside rows of every shape.
    func plant(_ count: Int) throws {
        try connection.execute(
            """
            INSERT INTO reconcile.review_items
                (fingerprint, kind, severity, status, resolution, transaction_id, user_id, product_id,
                 suggested_action, note, evidence, first_seen_run, last_seen_run)
            SELECT 'bulk:' || n, 'missed_delivery', (ARRAY['high','medium','low'])[1 + n % 3],
                   (ARRAY['open','in_review','resolved','dismissed'])[1 + n % 4],
                   CASE WHEN n % 4 = 2 THEN 'granted' END, 't-bulk-' || n, 'player-' || (n % 97),
                   'gems_' || (n % 5), 'grant',
                   CASE WHEN n % 7 = 0 THEN 'a note, "quoted"' || E'\\n' || '第二行 ' || n WHEN n % 11 = 0 THEN '=1+1' END,
                   '{}'::jsonb, (SELECT min(id) FROM reconcile.runs), (SELECT min(id) FROM reconcile.runs)
              FROM generate_series(1, $1::int) AS n
            """, [count])
    }

    func configuration(maximumConnections: Int = 8) -> ReviewWebConfiguration {
        var configuration = ReviewWebConfiguration(
            host: "127.0.0.1", port: 0, databaseURL: database.url, token: Secret(ReviewWebTests.token), judgement: .asStored)
        configuration.maximumConnections = maximumConnections
        configuration.connectionWaitTimeout = 3
        return configuration
    }

    @Test func aLargeQueueExportsChunkedAndByteIdenticalToTheCLI() async throws {
        try plant(6000)
        var written = Data()
        try ReviewQueue(connection: connection).exportCSV(ReviewFilter()) { written.append(contentsOf: $0.utf8) }
        let expected = written
        #expect(expected.count > 4 * 64 * 1024, "the export spans many chunks")
        let application = try buildApplication(configuration: configuration())
        try await application.test(.live) { client in
            let cookie = try await ReviewWebTests.login(client)
            let response = try await ReviewWebTests.get(client, "/export.csv?status=all", cookie: cookie)
            #expect(response.status == .ok)
            #expect(response.headers[.contentLength] == nil)
            #expect(response.headers[.transferEncoding]?.lowercased() == "chunked")
            #expect(response.headers[.contentType]?.hasPrefix("text/csv") == true)
            let body = Data(response.body.readableBytesView)
            #expect(body.count == expected.count)
            #expect(body == expected)
        }
    }

    /// With one database connection, a client that reads a little of a large export and hangs up
    /// must not keep it: the next page gets the connection instead of a 503. The export (about
    /// 20 MB) is larger than what the sockets' buffers hold, so the writer is still waiting for
    /// the client when it hangs up.
    @Test func aClientThatHangsUpFreesTheConnection() async throws {
        try plant(150_000)
        let items = try connection.query("SELECT count(*) FROM reconcile.review_items WHERE user_id = 'player-1'")[0]
            .decode(Int.self, at: 0)
        let application = try buildApplication(configuration: configuration(maximumConnections: 1))
        try await application.test(.live) { client in
            let cookie = try await ReviewWebTests.login(client)
            let port = try #require(client.port)
            let received = try await onOwnThread {
                try Self.readSomeAndHangUp(port: port, path: "/export.csv?status=all", cookie: cookie)
            }
            #expect(received.hasPrefix("HTTP/1.1 200"))
            var answered = false
            for _ in 0..<5 {
                let page = try await ReviewWebTests.get(client, "/", cookie: cookie)
                if page.status == .ok { answered = true; break }
                #expect(page.status == .serviceUnavailable)
            }
            #expect(answered, "the export kept the only connection after its client went away")
            // And a whole export still works on that one connection.
            let whole = try await ReviewWebTests.get(client, "/export.csv?status=all&user=player-1", cookie: cookie)
            #expect(whole.status == .ok)
            #expect(String(buffer: whole.body).split(separator: "\r\n").count == items + 1)
        }
    }

    /// Sends a GET for `path` with the session's cookie, then reads about the first 16 KB of the answer.
    static func getFirst16KB(_ socket: Int32, path: String, cookie: String) -> [UInt8] {
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: \(cookie)\r\n\r\n"
        _ = request.withCString { send(socket, $0, strlen($0), 0) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while received.count < 16 * 1024 {
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return received
    }

    /// Sends a GET on a socket with a small receive buffer, reads about 16 KB, stops reading for
    /// eight seconds (long enough for the server to fill the sockets' buffers and its own four
    /// chunks, so the database thread waits on back-pressure), then closes it.
    static func readSomeAndHangUp(port: Int, path: String, cookie: String) throws -> String {
        let socket = try LoopbackSocket.connect(port: port, timeout: 30, receiveBuffer: 4096)  // the first rows come after the sort of all 150,000: slow on a loaded machine
        defer { close(socket) }
        let received = getFirst16KB(socket, path: path, cookie: cookie)
        sleep(8)
        return String(decoding: received, as: UTF8.self)
    }

    /// An export that takes longer than the pages' `statement_timeout` (the client pauses for
    /// longer than it) is complete: every row, and the chunked body's last chunk.
    @Test func aSlowExportIsCompleteWhateverTheStatementTimeout() async throws {
        try plant(150_000)
        let items = try connection.query("SELECT count(*) FROM reconcile.review_items")[0].decode(Int.self, at: 0)
        var configuration = configuration()
        // Each FETCH must fit in it even on a loaded machine; the client's pause (a lower bound,
        // by sleep) is longer, so the whole download is.
        configuration.statementTimeout = 10
        // An upper bound for a loaded machine, not a margin: the one export gets a connection.
        configuration.connectionWaitTimeout = 60
        let application = try buildApplication(configuration: configuration)
        try await application.test(.live) { client in
            let cookie = try await ReviewWebTests.login(client)
            let port = try #require(client.port)
            let received = try await onOwnThread {
                try Self.download(port: port, path: "/export.csv?status=all", cookie: cookie, pause: 15)
            }
            #expect(received.head.hasPrefix("HTTP/1.1 200"))
            #expect(received.complete, "the chunked body ends with its last chunk")
            #expect(String(decoding: received.body, as: UTF8.self).split(separator: "\r\n").count == items + 1)
        }
    }

    /// A client that asks for a large export and never reads it (a paused download) loses the
    /// connection after the stall timeout: the next page gets it, and the download is aborted
    /// (no last chunk), not ended as if complete.
    @Test func aStalledDownloadIsAbortedAndFreesItsConnection() async throws {
        try plant(150_000)
        var configuration = configuration(maximumConnections: 1)
        configuration.exportStallTimeout = 1
        let application = try buildApplication(configuration: configuration)
        try await application.test(.live) { client in
            let cookie = try await ReviewWebTests.login(client)
            let port = try #require(client.port)
            let socket = try LoopbackSocket.connect(port: port, timeout: 120, receiveBuffer: 4096)
            defer { close(socket) }
            let request = "GET /export.csv?status=all HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: \(cookie)\r\n\r\n"
            _ = request.withCString { send(socket, $0, strlen($0), 0) }
            // The response's head comes once the first chunk is written, so from then on the export
            // holds the only connection. (Polling the queue before it, a loaded machine could serve
            // the page before the export took the connection, and the test would then read the
            // whole download.)
            let head = try await onOwnThread { () throws -> [UInt8] in
                var head: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 1024)
                while !String(decoding: head, as: UTF8.self).contains("\r\n\r\n") {
                    let count = recv(socket, &buffer, buffer.count, 0)
                    guard count > 0 else { break }
                    head.append(contentsOf: buffer[0..<count])
                }
                return head
            }
            #expect(String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 200"))
            // Pages get 503 while the export holds the only connection; an upper bound fails a
            // connection that is never freed.
            let deadline = ContinuousClock.now + .seconds(120)
            var answered = false
            while ContinuousClock.now < deadline {
                let page = try await ReviewWebTests.get(client, "/", cookie: cookie)
                if page.status == .ok { answered = true; break }
                #expect(page.status == .serviceUnavailable)
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(answered, "the stalled download kept the only connection")
            let rest = try await onOwnThread { head + (try Self.readToEnd(socket)) }
            let complete = Self.endsWithLastChunk(rest)
            #expect(rest.count > 0)
            #expect(!complete, "an aborted export must not look complete (\(rest.count) bytes): \(String(decoding: rest.prefix(400), as: UTF8.self))")
        }
    }

    /// Eight paused downloads (as many as the pool's connections) leave the pages answering
    /// (issue 36 item 16: they held all eight connections until the 30 s stall timeout, and the
    /// queue answered 503): exports hold at most two connections; the others wait like a page,
    /// then get a 503 page.
    @Test func pausedDownloadsHoldOnlyTheExportsShareAndThePagesStillAnswer() async throws {
        // About 4 MB of CSV, more than the sockets' buffers and the stream's four chunks hold, so
        // a paused download keeps its connection; no more, since this suite's other tests sort
        // their own large exports beside it within the pages' statement timeout.
        try plant(30_000)
        var configuration = configuration(maximumConnections: 8)
        configuration.exportStallTimeout = 20
        let application = try buildApplication(configuration: configuration)
        try await application.test(.live) { client in
            let cookie = try await ReviewWebTests.login(client)
            let port = try #require(client.port)
            let sockets = try (0..<8).map { _ in
                try LoopbackSocket.connect(port: port, timeout: 60, receiveBuffer: 4096)
            }
            defer { sockets.forEach { close($0) } }
            for socket in sockets {
                let request = "GET /export.csv?status=all HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: \(cookie)\r\n\r\n"
                _ = request.withCString { send(socket, $0, strlen($0), 0) }
            }
            // Each answer's status line, and no more: the downloads stay paused.
            let statuses = try await withThrowingTaskGroup(of: String.self) { group in
                for socket in sockets {
                    group.addTask { try await onOwnThread { Self.statusLine(socket) } }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0.hasPrefix("HTTP/1.1 200") }.count == 2, "\(statuses)")
            #expect(statuses.filter { $0.hasPrefix("HTTP/1.1 503") }.count == 6, "\(statuses)")
            // The two paused downloads still hold their connections (20 s stall timeout here):
            // the queue answers on the other six.
            let page = try await ReviewWebTests.get(client, "/", cookie: cookie)
            #expect(page.status == .ok)
        }
    }

    /// The first line of the answer on `socket`, reading no more than it must.
    static func statusLine(_ socket: Int32) -> String {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < 200, recv(socket, &byte, 1, 0) == 1 {
            if byte == 10 { break }
            line.append(byte)
        }
        return String(decoding: line, as: UTF8.self)
    }

    /// Reads everything until the server closes the connection (or the read times out).
    static func readToEnd(_ socket: Int32) throws -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received.append(contentsOf: buffer[0..<count])
            if endsWithLastChunk(received) { break }
        }
        return received
    }

    static func endsWithLastChunk(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 7 && Array(bytes.suffix(7)) == Array("\r\n0\r\n\r\n".utf8)
    }

    /// GETs `path`, reads about 16 KB, pauses `pause` seconds, then reads the rest; returns the
    /// response head, the de-chunked body and whether the body ended with its last chunk.
    static func download(port: Int, path: String, cookie: String, pause: UInt32) throws
        -> (head: String, body: [UInt8], complete: Bool)
    {
        let socket = try LoopbackSocket.connect(port: port, timeout: 120, receiveBuffer: 4096)
        defer { close(socket) }
        var received = getFirst16KB(socket, path: path, cookie: cookie)
        sleep(pause)
        received += try readToEnd(socket)
        let separator = Array("\r\n\r\n".utf8)
        guard let split = (0...(received.count - 4)).first(where: { Array(received[$0..<$0 + 4]) == separator }) else {
            return (String(decoding: received, as: UTF8.self), [], false)
        }
        let head = String(decoding: received[..<split], as: UTF8.self)
        var body: [UInt8] = []
        var index = split + 4
        var complete = false
        while index < received.count {
            guard let lineEnd = (index..<(received.count - 1)).first(where: { received[$0] == 13 && received[$0 + 1] == 10 }),
                let size = Int(String(decoding: received[index..<lineEnd], as: UTF8.self), radix: 16)
            else { break }
            if size == 0 {
                complete = true
                break
            }
            let start = lineEnd + 2
            guard start + size <= received.count else { break }
            body += received[start..<start + size]
            index = start + size + 2
        }
        return (head, body, complete)
    }
}
