import Foundation
import Glibc
import Hummingbird
import HummingbirdTesting
import Logging
import Postgres
@testable import Reconciliation
import ReviewWeb
import TestSupport
import Testing

/// Issue 24 items 5 and 12: the whole request is bounded, body included, and a body that cannot
/// be parsed is the client's 400, logged below error level.
@Suite("Review web pages: request bodies")
struct RequestBoundsTests {
    let database: TestDatabase

    init() throws {
        database = try TestDatabase.create("reviewbodies")
        let connection = try database.connect()
        _ = try Schema.migrate(connection)
        _ = try ReviewFixtures.seed(on: connection)
    }

    /// A client that sends a login form's head and then one byte of its body every 250 ms (each
    /// byte restarts the idle clock) is cut off at the body's time limit.
    @Test func aTrickledBodyIsCutOff() async throws {
        let records = LogRecords()
        var configuration = ReviewWebConfiguration(
            host: "127.0.0.1", port: 0, databaseURL: database.url, token: Secret(ReviewWebTests.token), judgement: .asStored,
            logger: records.logger())
        configuration.requestBodyTimeout = 1
        let application = try buildApplication(configuration: configuration)
        try await application.test(.live) { client in
            let port = try #require(client.port)
            // An upper bound that fails a connection held open, not a timing margin.
            let closed = try await onOwnThread { try Self.trickleUntilClosed(port: port, limit: 60) }
            #expect(closed, "the server still read the trickled body after 60 s")
        }
        let aborts = records.messages.filter { $0.message.contains("request body not received in time") }
        #expect(aborts.count == 1)
        #expect(aborts.allSatisfy { $0.level < .error })
        #expect(records.messages.allSatisfy { $0.level < .error }, "\(records.messages.map(\.message))")
    }

    /// Malformed chunked bodies: a 400 page with the pages' security headers, as README's limits
    /// table says (issue 36 item 17: the connection was closed without an answer), never a 500,
    /// and no error log.
    @Test(arguments: [
        "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            + "Transfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\nname=x\r\n0\r\n\r\n",
        "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            + "Transfer-Encoding: xchunked\r\n\r\n6\r\nname=x\r\n0\r\n\r\n",
        "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            + "Transfer-Encoding: chunked\r\n\r\nzz\r\nname=x\r\n0\r\n\r\n",
    ])
    func aMalformedChunkedBodyIsA400(request: String) async throws {
        let records = LogRecords()
        let configuration = ReviewWebConfiguration(
            host: "127.0.0.1", port: 0, databaseURL: database.url, token: Secret(ReviewWebTests.token), judgement: .asStored,
            logger: records.logger())
        let application = try buildApplication(configuration: configuration)
        try await application.test(.live) { client in
            let port = try #require(client.port)
            let answer = try await onOwnThread { try Self.send(request, port: port) }
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer.prefix(200))")
            let head = answer.lowercased().components(separatedBy: "\r\n\r\n")[0]
            #expect(head.contains("content-type: text/html"), "\(answer.prefix(400))")
            #expect(head.contains("content-security-policy: default-src 'none'"), "\(answer.prefix(400))")
            #expect(answer.contains("<!DOCTYPE html>"), "\(answer.prefix(400))")
        }
        #expect(records.messages.allSatisfy { $0.level < .error }, "\(records.messages.map(\.message))")
    }

    /// Sends a login form's head announcing 100 bytes, then a byte every 250 ms until the server
    /// closes the connection (true) or `limit` seconds pass (false).
    static func trickleUntilClosed(port: Int, limit: Int) throws -> Bool {
        let socket = try LoopbackSocket.connect(port: port, timeout: 1)
        defer { close(socket) }
        let head = "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            + "Content-Length: 100\r\n\r\n"
        _ = head.withCString { Glibc.send(socket, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        let deadline = Date().addingTimeInterval(TimeInterval(limit))
        var byte: UInt8 = UInt8(ascii: "a")
        var buffer = [UInt8](repeating: 0, count: 512)
        var sent = 0
        while Date() < deadline, sent < 99 {
            guard Glibc.send(socket, &byte, 1, Int32(MSG_NOSIGNAL)) == 1 else { return true }
            sent += 1
            // 0: the server closed the connection; -1 with EAGAIN: still open.
            let received = recv(socket, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if received == 0 || (received < 0 && errno != EAGAIN && errno != EWOULDBLOCK) { return true }
            usleep(250_000)
        }
        return false
    }

    /// Sends `request` and returns what the server answers before it closes (at most 10 s).
    static func send(_ request: String, port: Int) throws -> String {
        let socket = try LoopbackSocket.connect(port: port, timeout: 10)
        defer { close(socket) }
        _ = request.withCString { Glibc.send(socket, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received += buffer[0..<count]
            if received.count > 100_000 { break }
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Issue 24 item 9: a 404 for `//evil.example/login` builds its language links on this
    /// site's root, never on the raw path (which a browser reads as another host).
    @Test(arguments: ["//evil.example/login", "///evil.example/login"])
    func languageLinksNeverPointToAnotherHost(path: String) async throws {
        let configuration = ReviewWebConfiguration(
            host: "127.0.0.1", port: 0, databaseURL: database.url, token: Secret(ReviewWebTests.token), judgement: .asStored)
        let application = try buildApplication(configuration: configuration)
        try await application.test(.live) { client in
            let cookie = try await ReviewWebTests.login(client)
            let port = try #require(client.port)
            let request = "GET \(path)?lang=en HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: \(cookie)\r\nConnection: close\r\n\r\n"
            let answer = try await onOwnThread { try Self.send(request, port: port) }
            #expect(answer.hasPrefix("HTTP/1.1 404"), "\(answer.prefix(100))")
            #expect(!answer.contains("evil.example"), "a link or form names the raw path")
            #expect(answer.contains("href=\"/?lang=zh-Hans\""))
        }
    }
}
