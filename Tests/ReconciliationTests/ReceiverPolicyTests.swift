import Foundation
import Logging
import Postgres
@testable import Reconciliation
import Synchronization
import TestSupport
import Testing

/// The receiver's passes against the nightly run's policies and its run lock (issue 36 items 3
/// and 11), on a real PostgreSQL: a pass decides only the items its own judgement opened or
/// changed, a `per_run` limit is the nightly run's budget, which the passes after it share, and a
/// pass holds the run lock for its judgement only, never while a nightly run waits for it.
@Suite("Receiver passes, the policies' limits and the run lock", .serialized)
struct ReceiverPolicyTests {
    static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Grants what a JWS upload confirmed, two a run.
    static let policy = """
        rules:
          - name: small-pack
            when:
              kind: [missed_delivery]
              sources: [jws]
            limits:
              per_run: {items: 2}
            decide: granted
            note: confirmed by the customer's signed transaction
        """

    let database: TestDatabase
    let connection: Connection
    let folder: URL
    let transactions = (1...8).map { "tx-\($0)" }

    /// Eight purchases Apple confirms by their uploaded JWS that the app never credited.
    init() throws {
        (database, connection) = try TestDatabase.migrated("receiver_policy_limits")
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("receiver-policy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try ScriptedVerifier.upload(transactions, on: connection)
    }

    func settings(policy: Bool = true) throws -> Settings {
        let path = folder.appendingPathComponent("policy.yaml")
        try Data(Self.policy.utf8).write(to: path)
        var environment = [
            "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
            "RECONCILE_REPORT_DIR": folder.appendingPathComponent("reports").path,
        ]
        if policy { environment["RECONCILE_POLICY_FILE"] = path.path }
        return try Settings(lookup: environment.lookup)
    }

    func nightly(_ settings: Settings) async throws -> RunReport {
        try await ReconciliationJob(settings: settings, verifier: ScriptedVerifier(), logger: Self.quiet)
            .run(.init(since: Date().addingTimeInterval(-7 * 86_400)))
    }

    /// One receiver pass over `judging` (as if notifications about them had just been applied: their
    /// judgement is due), with the policy file when `policies`.
    func pass(
        judging: [String], policies: Bool = true, timing: ReceiverWorker.Timing = .init(), on connection: Connection
    ) async throws -> ReceiverWorker.Pass {
        try due(judging)
        let worker = ReceiverWorker(
            settings: try settings(), applier: NotificationApplier(verify: { _ in .invalid(reason: "unused") }),
            answerer: nil, forwarder: nil,
            policies: policies ? try PolicyFile.parse(Self.policy) : nil, timing: timing, logger: Self.quiet)
        return try await worker.pass(on: connection)
    }

    func due(_ transactions: [String]) throws {
        for transaction in transactions {
            try connection.execute(
                """
                INSERT INTO reconcile.receiver_judgements (transaction_id, due_at) VALUES ($1, now())
                ON CONFLICT (transaction_id) DO UPDATE SET due_at = now(), judged_at = NULL, judged_run = NULL
                """, [transaction])
        }
    }

    func granted() throws -> [String] {
        try connection.query(
            """
            SELECT DISTINCT i.transaction_id FROM reconcile.review_events e
              JOIN reconcile.review_items i ON i.id = e.review_item_id
             WHERE e.actor = 'policy:small-pack' ORDER BY 1
            """).map { try $0.decode(String.self, at: 0) }
    }

    /// Rule `small-pack`, `per_run: {items: 2}`, eight matching items: the nightly run grants two
    /// and leaves six to people; three receiver passes later (each judging two of the six again,
    /// as notifications about them would) still only two are granted: a pass decides only what its
    /// judgement opened or changed (nothing here: the six are as the night left them), and the
    /// night's budget is spent. The next nightly run has a budget of its own: two more.
    @Test func aPerRunLimitBoundsTheNightlyRunAndThePassesAfterIt() async throws {
        let night = try await nightly(try settings())
        #expect(night.policies.map(\.rule) == ["small-pack"] && night.policies.first?.decided == 2)
        #expect(try granted().count == 2)
        let left = transactions.filter { !((try? granted()) ?? []).contains($0) }
        #expect(left.count == 6)
        for round in 0..<3 {
            let done = try await pass(judging: Array(left[(round * 2)..<(round * 2 + 2)]), on: connection)
            #expect(done.judged == 2 && done.policyDecisions == 0, "\(done)")
        }
        #expect(try granted().count == 2)
        let next = try await nightly(try settings())
        #expect(next.policies.first?.decided == 2)
        #expect(try granted().count == 4)
    }

    /// A pass decides only its own items, and they count within the nightly run's budget. The
    /// night opened eight items and decided none (no policy file then): a pass that judges one of
    /// them again, unchanged, decides nothing though the budget is whole. Items a pass reopens are
    /// its own: the first such pass grants two of them and leaves the rest, and a later one grants
    /// none (the passes share the night's budget); the next nightly run starts afresh.
    @Test func aPassDecidesItsOwnItemsWithinTheBudgetThePassesShare() async throws {
        _ = try await nightly(try settings(policy: false))
        let unchanged = try await pass(judging: ["tx-1", "tx-2"], on: connection)
        #expect(unchanged.judged == 2 && unchanged.policyDecisions == 0, "\(unchanged)")
        #expect(try granted().isEmpty)
        try connection.execute("UPDATE reconcile.review_items SET status = 'auto_resolved'")
        let first = try await pass(judging: Array(transactions[0..<4]), on: connection)
        #expect(first.judged == 4 && first.policyDecisions == 2, "\(first)")
        let second = try await pass(judging: Array(transactions[4..<8]), on: connection)
        #expect(second.judged == 4 && second.policyDecisions == 0, "\(second)")
        #expect(try granted().count == 2 && Set(try granted()).isSubset(of: transactions[0..<4]))
        let night = try await nightly(try settings())
        #expect(night.policies.first?.decided == 2)
        #expect(try granted().count == 4)
    }

    /// A nightly run waiting for the run lock holds `runWanted` until it has the lock; a receiver
    /// pass that finds `runWanted` held leaves its judgement for later instead of taking the free
    /// lock, so the waiting run gets it as soon as the holder lets go, however steadily
    /// notifications arrive; with nobody waiting, the pass judges.
    @Test func aPassYieldsTheRunLockToANightlyRunWaitingForIt() async throws {
        let holder = try database.connect()
        #expect(try holder.tryAdvisoryLock(Schema.LockKey.run))
        let waiting = UncheckedConnection(try database.connect())
        let taken = Task { try await ReconciliationJob.takeRunLock(waiting.connection) }
        let probe = try database.connect()
        let deadline = ContinuousClock.now + .seconds(20)
        while try probe.tryAdvisoryLock(Schema.LockKey.runWanted) {
            _ = try probe.advisoryUnlock(Schema.LockKey.runWanted)
            guard ContinuousClock.now < deadline else {
                Issue.record("the waiting run never took runWanted")
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        _ = try holder.advisoryUnlock(Schema.LockKey.run)
        #expect(try await taken.value)
        // The run has the lock and no longer wants it.
        #expect(try probe.tryAdvisoryLock(Schema.LockKey.runWanted))
        _ = try waiting.connection.advisoryUnlock(Schema.LockKey.run)

        // The lock is free, but a run waits for it (the probe holds runWanted as one would).
        let yielded = try await pass(judging: ["tx-1"], policies: false, on: try database.connect())
        #expect(yielded.waitingForNightlyRun && yielded.judged == 0, "\(yielded)")
        _ = try probe.advisoryUnlock(Schema.LockKey.runWanted)
        let judged = try await pass(judging: ["tx-1"], policies: false, on: try database.connect())
        #expect(!judged.waitingForNightlyRun && judged.judged == 1, "\(judged)")
    }

    /// The policies of a pass decide outside the run lock: while they run, a nightly run could
    /// take it (here another session does, and lets go).
    @Test func aPassAppliesItsPoliciesWithTheRunLockReleased() async throws {
        _ = try await nightly(try settings(policy: false))
        try connection.execute("UPDATE reconcile.review_items SET status = 'auto_resolved'")
        let probe = UncheckedConnection(try database.connect())
        let free = Mutex<[Bool]>([])
        var timing = ReceiverWorker.Timing()
        timing.beforePolicies = {
            let taken = (try? probe.connection.tryAdvisoryLock(Schema.LockKey.run)) ?? false
            if taken { _ = try? probe.connection.advisoryUnlock(Schema.LockKey.run) }
            free.withLock { $0.append(taken) }
        }
        let done = try await pass(judging: ["tx-1"], timing: timing, on: try database.connect())
        #expect(done.judged == 1 && done.policyDecisions == 1, "\(done)")
        #expect(free.withLock { $0 } == [true])
    }
}

/// A connection handed to one task at a time (the test's), hence unchecked.
private struct UncheckedConnection: @unchecked Sendable {
    let connection: Connection
    init(_ connection: Connection) { self.connection = connection }
}
