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

    init(url: String?, maximumConnections: Int, waitTimeout: Duration, statementTimeout: Duration) {
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
        try await workers.run { connection in Result { try body(ReviewService(connection: connection)) } }
    }

    /// Runs asynchronous work (the desk's lookup, which may wait for Apple) on one of the
    /// connections, on that connection's own thread: its libpq calls block that thread only, and
    /// what it awaits resumes there (``ThreadExecutor``).
    func runAsync<T: Sendable>(_ body: @escaping @Sendable (Connection) async throws -> T) async throws -> T {
        try await workers.run { connection in
            let live = UncheckedConnection(connection: connection)
            return ThreadExecutor.run { try await body(live.connection) }
        }
    }
}

/// A connection handed to work that runs on its own thread (the one that owns it).
private struct UncheckedConnection: @unchecked Sendable {
    let connection: Connection
}

/// A task executor that runs its jobs on the thread that called ``run(_:)``, until the work is
/// done: async code whose synchronous parts block (libpq) runs on a database thread, never on
/// Swift's cooperative threads.
final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    // Guards `jobs` and `outcome`; signalled when a job arrives or the work ends.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var done = false

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.withLock { jobs.append(job) }
        condition.signal()
    }

    private func finish() {
        condition.withLock { done = true }
        condition.signal()
    }

    /// Runs `body` to its end on the calling thread.
    static func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
        let executor = ThreadExecutor()
        let outcome = OutcomeBox<T>()
        Task(executorPreference: executor) {
            do {
                outcome.value = .success(try await body())
            } catch {
                outcome.value = .failure(error)
            }
            executor.finish()
        }
        while true {
            executor.condition.lock()
            while executor.jobs.isEmpty && !executor.done { executor.condition.wait() }
            let ready = executor.jobs
            executor.jobs.removeAll()
            let finished = executor.done && ready.isEmpty
            executor.condition.unlock()
            if finished { break }
            for job in ready { job.runSynchronously(on: executor.asUnownedTaskExecutor()) }
        }
        return outcome.value ?? .failure(CancellationError())
    }
}

/// Written by the task before it signals `done`, read by the thread after: the condition orders them.
private final class OutcomeBox<T: Sendable>: @unchecked Sendable {
    var value: Result<T, any Error>?
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
        _ = try connection.query("SELECT set_config('statement_timeout', $1, false)", String(max(1, milliseconds)))
        return connection
    }
}

/// No database connection for a page in time (the database is stalled or overloaded): a 503.
struct DatabaseBusyError: Error, CustomStringConvertible {
    let reason: String
    var description: String { "database busy: \(reason)" }
}
