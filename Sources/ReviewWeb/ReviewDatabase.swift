import Foundation
import Postgres
import Reconciliation

/// Runs queue work on PostgreSQL for the pages, within fixed limits, so a stalled database
/// stalls only the pages that need it:
///
/// - at most `maximumConnections` connections, each owned by one dedicated thread: libpq blocks,
///   and neither Swift's cooperative threads nor libdispatch's shared pool may be the ones
///   blocked (with every pool thread stuck in libpq, even the login page stops answering);
/// - a request waits at most `waitTimeout` for a free connection, then gets `DatabaseBusyError`
///   (a 503 page) instead of a new connection;
/// - every statement of a page is cancelled after `statementTimeout` (PostgreSQL's
///   `statement_timeout`), so a locked table cannot hold a connection forever.
final class ReviewDatabase: Sendable {
    private let workers: Workers
    /// `RECONCILE_APPROVAL_ABOVE`, for every service the pages use.
    let approval: ApprovalThreshold

    init(
        url: String?, maximumConnections: Int, waitTimeout: Duration, statementTimeout: Duration,
        approval: ApprovalThreshold
    ) {
        self.approval = approval
        workers = Workers(url: url, waitTimeout: waitTimeout, statementTimeout: statementTimeout)
        for index in 0..<max(1, maximumConnections) {
            let workers = self.workers
            let thread = Thread { workers.work() }
            thread.name = "reconcile.serve.database.\(index)"
            thread.start()
        }
    }

    deinit {
        workers.stop()
    }

    /// Runs `body` with a service on one of the connections, or throws `DatabaseBusyError` when
    /// none is free within the wait timeout.
    func run<T: Sendable>(_ body: @escaping @Sendable (ReviewService) throws -> T) async throws -> T {
        let approval = self.approval
        return try await workers.run { connection in
            Result { try body(ReviewService(connection: connection, approval: approval)) }
        }
    }

    /// Runs `body` on one of the connections: work of many transactions (a bulk decision).
    func run<T: Sendable>(connection body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await workers.run { connection in Result { try body(connection) } }
    }

    /// Lends a connection for one step at a time (the desk's lookup): work that waits for Apple
    /// between its steps holds none while it waits.
    var lender: ConnectionLender {
        let workers = self.workers
        return ConnectionLender { step in try await workers.run { connection in Result { try step(connection) } } }
    }
}

/// The threads' shared state; the threads hold it, not the `ReviewDatabase`, so they stop (and
/// close their connections) when the application that made them goes away.
private final class Workers: @unchecked Sendable {
    /// One request's work, waiting for a thread.
    private struct Job {
        let id: UInt64
        let run: (Connection) -> Void
        let refuse: (any Error) -> Void
    }

    private let url: String?
    private let statementTimeout: Duration
    private let waitTimeout: Duration
    // Guards `pending`, `nextID` and `stopped`; signalled when a job arrives or on stop.
    private let condition = NSCondition()
    private var pending: [Job] = []
    private var nextID: UInt64 = 0
    private var stopped = false

    init(url: String?, waitTimeout: Duration, statementTimeout: Duration) {
        self.url = url
        self.waitTimeout = waitTimeout
        self.statementTimeout = statementTimeout
    }

    func stop() {
        condition.withLock { stopped = true }
        condition.broadcast()
    }

    func run<T: Sendable>(_ body: @escaping @Sendable (Connection) -> Result<T, any Error>) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let id = condition.withLock {
                nextID += 1
                pending.append(Job(
                    id: nextID,
                    run: { connection in continuation.resume(with: body(connection)) },
                    refuse: { continuation.resume(throwing: $0) }))
                return nextID
            }
            condition.signal()
            // Whoever takes the job out of `pending` (a thread, or this timer) resumes it, once.
            let waitTimeout = self.waitTimeout
            Task {
                try? await Task.sleep(for: waitTimeout)
                guard let job = self.take(id: id) else { return }
                job.refuse(DatabaseBusyError(reason: "no database connection was free within \(waitTimeout)"))
            }
        }
    }

    private func take(id: UInt64) -> Job? {
        condition.withLock {
            guard let index = pending.firstIndex(where: { $0.id == id }) else { return nil }
            return pending.remove(at: index)
        }
    }

    /// One thread's loop: take the oldest job, run it on this thread's own connection.
    func work() {
        var connection: Connection?
        while true {
            condition.lock()
            while pending.isEmpty && !stopped { condition.wait() }
            if stopped {
                let left = pending
                pending.removeAll()
                condition.unlock()
                for job in left { job.refuse(DatabaseBusyError(reason: "the server is stopping")) }
                return
            }
            let job = pending.removeFirst()
            condition.unlock()
            if let current = connection, !current.isHealthy { connection = nil }
            if connection == nil {
                do {
                    connection = try connect()
                } catch {
                    job.refuse(error)
                    continue
                }
            }
            guard let live = connection else { continue }
            job.run(live)
            // A connection left broken or mid-transaction by a failure is not reused.
            if !live.isHealthy || live.isInTransaction { connection = nil }
        }
    }

    private func connect() throws -> Connection {
        let connection = try Connection(url: url)
        let (seconds, attoseconds) = statementTimeout.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        try connection.setParameter("statement_timeout", to: String(max(1, milliseconds)))
        return connection
    }
}

/// No database connection for a page in time (the database is stalled or overloaded): a 503.
struct DatabaseBusyError: Error, CustomStringConvertible {
    let reason: String
    var description: String { "database busy: \(reason)" }
}
