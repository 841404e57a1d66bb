import Foundation
import Postgres
import Reconciliation
import Synchronization

/// Runs queue work on PostgreSQL for the pages, within fixed limits, so a stalled database
/// stalls only the pages that need it:
///
/// - at most `maximumConnections` connections, each owned by one dedicated thread: libpq blocks,
///   and neither Swift's cooperative threads nor libdispatch's shared pool may be the ones
///   blocked (with every pool thread stuck in libpq, even the login page stops answering);
/// - a request waits at most `waitTimeout` for a free connection, then gets `DatabaseBusyError`
///   (a 503 page) instead of a new connection;
/// - every statement of a page is cancelled after `statementTimeout` (PostgreSQL's
///   `statement_timeout`), so a locked table cannot hold a connection forever;
/// - CSV exports, which hold their connection for as long as the client takes the file, hold at
///   most `maximumExports` of them at once (at most all but one), so paused downloads cannot take
///   every page down: an export past the share waits for one like a page does, then gets a 503.
final class ReviewDatabase: Sendable {
    private let workers: Workers
    private let exports: ExportPermits
    /// `RECONCILE_APPROVAL_ABOVE`, for every decision the pages make.
    let approval: ApprovalThreshold
    /// How decisions made in the pages judge their item again first (SPEC section 6).
    let judgement: DecisionJudgement

    init(
        url: String?, maximumConnections: Int, waitTimeout: Duration, statementTimeout: Duration,
        approval: ApprovalThreshold, judgement: DecisionJudgement, maximumExports: Int = 2
    ) {
        self.approval = approval
        self.judgement = judgement
        exports = ExportPermits(
            limit: max(1, min(maximumExports, maximumConnections - 1)), waitTimeout: waitTimeout)
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

    /// Runs `body` with the queue on one of the connections, or throws `DatabaseBusyError` when
    /// none is free within the wait timeout.
    func read<T: Sendable>(_ body: @escaping @Sendable (ReviewQueue) throws -> T) async throws -> T {
        try await workers.run { connection in Result { try body(ReviewQueue(connection: connection)) } }
    }

    /// Runs `body` with the decisions (the pages' threshold and judgement) on one of the
    /// connections, or throws `DatabaseBusyError` when none is free within the wait timeout.
    func decide<T: Sendable>(_ body: @escaping @Sendable (ReviewDecisions) throws -> T) async throws -> T {
        let approval = self.approval
        let judgement = self.judgement
        return try await workers.run { connection in
            Result { try body(ReviewDecisions(connection: connection, approval: approval, judgement: judgement)) }
        }
    }

    /// Runs `body` (a CSV export) with the queue on one of the connections the exports may hold,
    /// or throws `DatabaseBusyError` when none is free within the wait timeout.
    func runExport<T: Sendable>(_ body: @escaping @Sendable (ReviewQueue) throws -> T) async throws -> T {
        try await exports.acquire()
        defer { exports.release() }
        return try await read(body)
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
///
/// A job goes to the thread that became free last (a stack of idle threads, each woken alone):
/// at a page at a time one connection serves them all, with its server process's caches, its
/// prepared statements and the diff's work tables warm. Woken in turn instead, eight connections
/// each paid the first lookup's cost (some twenty tables declared and analysed, the catalog
/// read), and those first lookups were the customer page's p95 (docs/benchmarks.md).
private final class Workers: @unchecked Sendable {
    /// One request's work, waiting for a thread.
    private struct Job {
        let id: UInt64
        let run: (Connection) -> Void
        let refuse: (any Error) -> Void
    }

    /// An idle thread's mailbox: the job handed to it, and what wakes it.
    private final class Idle: @unchecked Sendable {
        let wake = DispatchSemaphore(value: 0)
        /// Set under `Workers.lock` by whoever pops this thread off `idle`; nil when woken to stop.
        var job: Job?
    }

    private let url: String?
    private let statementTimeout: Duration
    private let waitTimeout: Duration
    // Guards `pending`, `idle`, `nextID` and `stopped`.
    private let lock = NSLock()
    private var pending: [Job] = []
    /// Threads waiting for work, the one that became free last at the end.
    private var idle: [Idle] = []
    private var nextID: UInt64 = 0
    private var stopped = false

    init(url: String?, waitTimeout: Duration, statementTimeout: Duration) {
        self.url = url
        self.waitTimeout = waitTimeout
        self.statementTimeout = statementTimeout
    }

    func stop() {
        let sleepers = lock.withLock {
            stopped = true
            defer { idle.removeAll() }
            return idle
        }
        for sleeper in sleepers { sleeper.wake.signal() }
    }

    func run<T: Sendable>(_ body: @escaping @Sendable (Connection) -> Result<T, any Error>) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let (id, woken): (UInt64, Idle?) = lock.withLock {
                nextID += 1
                let job = Job(
                    id: nextID,
                    run: { connection in continuation.resume(with: body(connection)) },
                    refuse: { continuation.resume(throwing: $0) })
                if !stopped, let free = idle.popLast() {
                    free.job = job
                    return (nextID, free)
                }
                pending.append(job)
                return (nextID, nil)
            }
            if let woken {
                woken.wake.signal()
                return
            }
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
        lock.withLock {
            guard let index = pending.firstIndex(where: { $0.id == id }) else { return nil }
            return pending.remove(at: index)
        }
    }

    /// The next job for this thread: the oldest waiting, else one handed to it once it is the
    /// last free thread; nil when the pool stops (the jobs still waiting are refused then).
    private func next(_ mailbox: Idle) -> Job? {
        lock.lock()
        if !stopped, !pending.isEmpty {
            defer { lock.unlock() }
            return pending.removeFirst()
        }
        if !stopped { idle.append(mailbox) }
        let stopping = stopped
        lock.unlock()
        if !stopping {
            mailbox.wake.wait()
            let handed: Job? = lock.withLock {
                defer { mailbox.job = nil }
                return mailbox.job
            }
            if let handed { return handed }
        }
        let left: [Job] = lock.withLock {
            defer { pending.removeAll() }
            return pending
        }
        for job in left { job.refuse(DatabaseBusyError(reason: "the server is stopping")) }
        return nil
    }

    /// One thread's loop: take a job, run it on this thread's own connection.
    func work() {
        let mailbox = Idle()
        var connection: Connection?
        while let job = next(mailbox) {
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

/// The exports' share of the connections: at most `limit` at once; the others wait, each at most
/// the pages' wait timeout, in the order they came.
private final class ExportPermits: Sendable {
    private struct State {
        var available: Int
        var nextID: UInt64 = 0
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
    }

    private let state: Mutex<State>
    private let waitTimeout: Duration

    init(limit: Int, waitTimeout: Duration) {
        state = Mutex(State(available: limit))
        self.waitTimeout = waitTimeout
    }

    func acquire() async throws {
        let waitTimeout = self.waitTimeout
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let id: UInt64? = state.withLock { state in
                if state.available > 0 {
                    state.available -= 1
                    return nil
                }
                state.nextID += 1
                state.waiters.append((state.nextID, continuation))
                return state.nextID
            }
            guard let id else {
                continuation.resume()
                return
            }
            // Whoever takes the waiter out (a release, or this timer) resumes it, once.
            Task {
                try? await Task.sleep(for: waitTimeout)
                let expired = self.state.withLock { state in
                    state.waiters.firstIndex { $0.id == id }.map { state.waiters.remove(at: $0).continuation }
                }
                expired?.resume(throwing: DatabaseBusyError(
                    reason: "every connection CSV exports may hold was busy for \(waitTimeout)"))
            }
        }
    }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard !state.waiters.isEmpty else {
                state.available += 1
                return nil
            }
            return state.waiters.removeFirst().continuation
        }
        next?.resume()
    }
}
