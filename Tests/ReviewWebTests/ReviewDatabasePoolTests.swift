import Foundation
import Synchronization
import Postgres
@testable import ReviewWeb
import TestSupport
import Testing

/// The pages' connection pool hands work to the thread that became free last: requests one at a
/// time run on one or two connections (their server processes' caches and the diff's work tables
/// stay warm), requests at once spread over as many connections as they need, and none is lost.
@Suite("Review pages: the connection pool")
struct ReviewDatabasePoolTests {
    static func backend(_ database: ReviewDatabase) async throws -> Int32 {
        try await database.run(connection: { connection in
            try connection.query("SELECT pg_backend_pid()")[0].decode(Int32.self, at: 0)
        })
    }

    @Test func requestsOneAtATimeRunOnOneConnection() async throws {
        let (test, _) = try TestDatabase.migrated("pool_lifo")
        let database = ReviewDatabase(
            url: test.url, maximumConnections: 8, waitTimeout: .seconds(5), statementTimeout: .seconds(5),
            approval: .none, judgement: .refusingDecisions)
        // Once every thread is started and waiting.
        _ = try await Self.backend(database)
        try await Task.sleep(for: .milliseconds(300))
        var backends: Set<Int32> = []
        for _ in 0..<40 { backends.insert(try await Self.backend(database)) }
        // One, or two in turn: the next request can arrive while the thread that answered the last
        // one is still on its way back to the stack. Woken in turn, the threads used all eight.
        #expect(backends.count <= 3, "one request at a time ran on \(backends.count) connections")
    }

    @Test func requestsAtOnceSpreadOverTheConnectionsAndAllAreAnswered() async throws {
        let (test, _) = try TestDatabase.migrated("pool_spread")
        let database = ReviewDatabase(
            url: test.url, maximumConnections: 4, waitTimeout: .seconds(20), statementTimeout: .seconds(20),
            approval: .none, judgement: .refusingDecisions)
        // Eight requests that each hold their connection for a while: four run at once, the others
        // wait for a free connection, and every one is answered.
        let backends = try await withThrowingTaskGroup(of: Int32.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await database.run(connection: { connection in
                        _ = try connection.query("SELECT pg_sleep(0.3)")
                        return try connection.query("SELECT pg_backend_pid()")[0].decode(Int32.self, at: 0)
                    })
                }
            }
            var all: [Int32] = []
            for try await backend in group { all.append(backend) }
            return all
        }
        #expect(backends.count == 8)
        #expect(Set(backends).count == 4)
    }

    @Test func aRequestWaitingPastItsTimeoutIsRefusedAndTheNextOneAnswered() async throws {
        let (test, _) = try TestDatabase.migrated("pool_timeout")
        let database = ReviewDatabase(
            url: test.url, maximumConnections: 1, waitTimeout: .milliseconds(200), statementTimeout: .seconds(20),
            approval: .none, judgement: .refusingDecisions)
        // The one connection is held until the next request has been refused (at most a minute),
        // and that request asks only once it is held: fixed times (a 100 ms head start, a 1 s hold)
        // failed on a loaded machine, where a 10 ms sleep can take a second.
        let holding = Mutex(false), released = Mutex(false)
        async let held: Void = database.run(connection: { connection in
            holding.withLock { $0 = true }
            for _ in 0..<6_000 where !released.withLock({ $0 }) { _ = try connection.query("SELECT pg_sleep(0.01)") }
        })
        while !holding.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        await #expect(throws: DatabaseBusyError.self) { try await Self.backend(database) }
        released.withLock { $0 = true }
        try await held
        _ = try await Self.backend(database)
    }
}
