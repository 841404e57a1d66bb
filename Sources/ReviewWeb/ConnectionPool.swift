import Dispatch
import Foundation
import Postgres
import Reconciliation

/// Runs queue work on PostgreSQL off Swift's cooperative threads: libpq blocks, so each call
/// runs on a dispatch queue, with a few idle connections kept for the next request.
final class ReviewDatabase: @unchecked Sendable {
    private let url: String?
    private let queue = DispatchQueue(label: "reconcile.serve.database", attributes: .concurrent)
    // Guards `idle`; connections are handed to one request at a time, never shared.
    private let lock = NSLock()
    private var idle: [Connection] = []
    private let maximumIdle = 4

    init(url: String?) {
        self.url = url
    }

    /// Runs `body` with a service on a pooled connection.
    func run<T: Sendable>(_ body: @escaping @Sendable (ReviewService) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.withConnection { try body(ReviewService(connection: $0)) } })
            }
        }
    }

    private func withConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        let connection = try lock.withLock { idle.popLast() } ?? Connection(url: url)
        do {
            let value = try body(connection)
            giveBack(connection)
            return value
        } catch {
            // A connection that failed mid-way may be broken or mid-transaction: let it go.
            if !((error as? PostgresError)?.isConnectionFailure ?? false) { giveBack(connection) }
            throw error
        }
    }

    private func giveBack(_ connection: Connection) {
        guard connection.isHealthy else { return }
        lock.withLock {
            if idle.count < maximumIdle { idle.append(connection) }
        }
    }
}
