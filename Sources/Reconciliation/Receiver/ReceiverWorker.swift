import AppStore
import AsyncHTTPClient
import Foundation
import Logging
import Postgres
import Synchronization

/// What the receiver does with the notifications it stored, the same hour and in the same
/// process (SPEC section 16), one pass at a time:
///
/// 1. applies every stored notification not yet applied, and every Notification History record
///    the hourly sync accepted and nobody applied yet (``NotificationApplier``, the nightly run's
///    code: each notificationUUID once, whichever copy came first, its transaction into the white
///    table) and queues the transactions they brought for judgement once their grace period has
///    passed, in the same transaction as each batch it applies;
/// 1½. with Google Play on, asks the Developer API about the purchase token each stored Play
///    notification names and stores Google's answer, never the notification's word, queueing the
///    transactions it brought for judgement the same way (``PlayNotificationWorker``);
/// 2. wakes the answers to each `CONSUMPTION_REQUEST` it applied (``ConsumptionAnswerer``, SPEC
///    section 14's rules), which run beside the passes (``ReceiverChore``), never in them;
/// 3. judges the transactions whose grace period has passed with the nightly run's SQL scoped to
///    them (``DiffScope/transactions(_:)``, as the support desk does), and upserts what it finds
///    into the review queue with the nightly fingerprints, and auto-resolves their items whose
///    finding is gone (a refund reversed) — under the run lock, held for that one judgement of at
///    most `Timing.judgementsPerPass` transactions, and never while a nightly run holds the lock
///    or waits for it (`LockKey.runWanted`): it waits for the next pass, then goes on; then,
///    the lock released, the policies (`RECONCILE_POLICY_FILE`, ``PolicyEngine``) decide what
///    they take of the items this judgement opened or changed (never the rest of the queue, the
///    nightly run's), as the pass's run, within their limits (a `per_run` limit is the last
///    nightly run's budget, which the passes after it share); their decisions wake the outbox's
///    delivery, which runs beside the passes (``OutboxDelivery``), never in them;
/// 4. and beside the passes too, on a connection of its own, forwards stored notifications to the
///    app's endpoint (``NotificationForwarder``), woken whenever the worker is.
///
/// Apple's answer to a refund-request answer may take a call's whole retry budget, and the app's
/// endpoint its deadline per copy: the passes wait for neither, so a refund's item comes within a
/// minute of Apple's POST whatever Apple and the app do.
///
/// A pass that applies or judges is recorded as a run of kind `receiver`. Its transactions are
/// touched by a run after the last nightly one, so the next nightly run judges them again, with
/// the same rules and fingerprints: it finds what the receiver found and opens nothing new.
public struct ReceiverWorker: Sendable {
    /// How often the worker looks for work when no notification wakes it.
    public struct Timing: Sendable {
        /// The longest wait between passes (a notification wakes the worker at once).
        public var interval: Duration = .seconds(5)
        /// The wait after a pass that failed (database down): the next pass tries again.
        public var afterFailure: Duration = .seconds(10)
        /// After a pass that applied notifications, the next starts no sooner than this after it
        /// started, woken or not: a burst is applied by a few passes of many notifications each, not
        /// one pass (with its own dozen statements) per notification, which took more of the
        /// database than storing them. A refund still reaches its item within a second.
        public var gathering: Duration = .milliseconds(500)
        /// The most transactions one pass judges.
        public var judgementsPerPass = 1000
        /// How often refund requests left waiting (no consent yet, Apple unreachable) are tried
        /// again; a pass that applied notifications wakes the answers at once.
        public var answersRetry: Duration = .seconds(300)
        /// Told of every pass that ended (tests).
        public var observe: @Sendable (Pass) -> Void = { _ in }
        /// Called when a pass is about to apply the policies, the run lock released (tests).
        public var beforePolicies: @Sendable () -> Void = {}
        /// The metrics file (`--metrics-file`), rewritten after a pass at most this often.
        public var metricsFile: String?
        public var metricsInterval: Duration = .seconds(15)

        public init() {}
    }

    /// What one pass did.
    public struct Pass: Sendable, Equatable {
        /// The receiver run recorded, if the pass applied or judged anything.
        public var runID: Int64?
        public var applied = 0
        /// Google Play notifications whose purchase Google answered about (``PlayNotificationWorker``).
        public var playApplied = 0
        public var judged = 0
        public var itemsOpened = 0
        /// Items of the transactions judged whose finding is gone (a refund reversed, say).
        public var itemsAutoResolved = 0
        /// Items the policies decided after the judgement.
        public var policyDecisions = 0
        /// Judgements due but left for a later pass because a nightly run holds the run lock.
        public var waitingForNightlyRun = false

        public init() {}
    }

    let settings: Settings
    let applier: NotificationApplier
    let answerer: ConsumptionAnswerer?
    let forwarder: NotificationForwarder?
    /// The policies, read when the receiver started.
    let policies: PolicyFile?
    /// Google Play's notifications (nil while Play is off).
    let play: PlayNotificationWorker?
    public let timing: Timing
    /// What the listener counted (refusals), for the metrics file.
    public let counters: ReceiverCounters
    let logger: Logger

    /// A worker; `answerer` nil when answers are off or there are no Server API credentials,
    /// `forwarder` nil without `RECONCILE_NOTIFICATION_FORWARD_URL`, `policies` nil without
    /// `RECONCILE_POLICY_FILE`, `play` nil while Google Play is off.
    public init(
        settings: Settings, applier: NotificationApplier, answerer: ConsumptionAnswerer?,
        forwarder: NotificationForwarder?, policies: PolicyFile? = nil, timing: Timing = Timing(),
        counters: ReceiverCounters = ReceiverCounters(), play: PlayNotificationWorker? = nil, logger: Logger
    ) {
        self.policies = policies
        self.play = play
        self.counters = counters
        self.settings = settings
        self.applier = applier
        self.answerer = answerer
        self.forwarder = forwarder
        self.timing = timing
        self.logger = logger
    }

    /// Passes until cancelled: one when `wakeup` is woken (a notification was stored), and at least
    /// every `timing.interval`. A pass that fails is logged and tried again; the process goes on.
    ///
    /// With an outbox webhook configured, the policies' decisions reach it as a person's do, at
    /// once, but from a task of its own (``OutboxDelivery``, a child of this one, cancelled with
    /// it): a delivery pass may take minutes against a slow webhook (`passBudget` and a row's
    /// worst case), and the passes here must not wait for it — refund requests are answered within
    /// 60 s, refunds judged within a minute (SPEC section 16). The answers to refund requests and
    /// the forwarding are children of this task in the same way (``ReceiverChore``).
    public func run(wakeup: ReceiverWakeup) async throws {
        let delivery = ActionOutbox.Webhook(settings: settings).map {
            OutboxDelivery(webhook: $0, databaseURL: settings.databaseURL, logger: logger)
        }
        try await HTTPClient.withHTTPClient(configuration: .init(redirectConfiguration: .disallow)) { http in
            let answering = answerer.map { answerer in
                ReceiverChore(
                    "refund-request answers", databaseURL: settings.databaseURL, interval: timing.answersRetry,
                    afterFailure: timing.afterFailure, logger: logger
                ) { [logger] connection in
                    let summary = try await answerer.answerPending(on: connection)
                    guard summary != ConsumptionAnswerer.Summary() else { return }
                    logger.info("refund requests answered", metadata: [
                        "consumption.answered": "\(summary.answered)", "consumption.expired": "\(summary.expired)",
                        "consumption.failed": "\(summary.failed)", "consumption.waiting": "\(summary.waiting)",
                    ])
                }
            }
            let forwarding = forwarder.map { forwarder in
                ReceiverChore(
                    "forwarding", databaseURL: settings.databaseURL, interval: timing.interval,
                    afterFailure: timing.afterFailure, logger: logger
                ) { [logger] connection in
                    let pass = try await forwarder.pass(http: http, on: connection)
                    guard pass != NotificationForwarder.Pass() else { return }
                    logger.info("notifications forwarded", metadata: [
                        "forward.sent": "\(pass.forwarded)", "forward.failed": "\(pass.failed)",
                    ])
                }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                if let delivery { group.addTask { await delivery.run() } }
                if let answering { group.addTask { await answering.run() } }
                if let forwarding { group.addTask { await forwarding.run() } }
                try await passes(wakeup: wakeup, delivery: delivery, answering: answering, forwarding: forwarding)
                group.cancelAll()
            }
        }
    }

    private func passes(
        wakeup: ReceiverWakeup, delivery: OutboxDelivery?, answering: ReceiverChore?, forwarding: ReceiverChore?
    ) async throws {
        var connection: Connection?
        var metricsWritten: ContinuousClock.Instant?
        while !Task.isCancelled {
            var wait = timing.interval
            let started = ContinuousClock.now
            var applied = false
            // Whatever woke the worker (a notification stored) may be a copy to forward.
            forwarding?.trigger()
            do {
                let open = try connection ?? settings.connect()
                connection = open
                let pass = try await self.pass(answering: answering, on: open)
                applied = pass.applied + pass.playApplied > 0
                if pass.policyDecisions > 0 { delivery?.trigger() }
                timing.observe(pass)
                if let path = timing.metricsFile,
                    metricsWritten.map({ ContinuousClock.now - $0 >= timing.metricsInterval }) ?? true
                {
                    try ReceiverMetrics.write(to: path, counters: counters, on: open)
                    metricsWritten = ContinuousClock.now
                }
                if pass.runID != nil {
                    logger.info("receiver pass", metadata: Self.metadata(pass))
                }
            } catch is CancellationError {
                break
            } catch {
                // The session may be gone (the server restarted): the next pass opens a new one.
                connection = nil
                wait = timing.afterFailure
                logger.error("receiver pass failed; trying again", metadata: ["error": "\(error)"])
            }
            if applied { try? await Task.sleep(until: started + timing.gathering) }
            await wakeup.wait(atMost: wait)
        }
    }

    /// One pass: apply, then judge. A pass that applied notifications wakes `answering` (a new
    /// refund request answered within seconds, beside this pass and the next).
    public func pass(on connection: Connection) async throws -> Pass {
        try await pass(answering: nil, on: connection)
    }

    func pass(answering: ReceiverChore?, on connection: Connection) async throws -> Pass {
        var pass = Pass()
        var run: Int64?
        func runID() throws -> Int64 {
            if let run { return run }
            let id = try connection.query(
                ReceiverSQL.startRun,
                ["environment": settings.environment.rawValue, "host": ProcessInfo.processInfo.hostName,
                 "pid": Int(ProcessInfo.processInfo.processIdentifier)]
            )[0].decode(Int64.self, at: 0)
            run = id
            return id
        }

        if try pendingNotifications(on: connection) {
            let id = try runID()
            // Each batch's transactions are noted for judgement in the batch's own transaction: a
            // pass that fails after a batch committed (the session lost) leaves none of them
            // applied and not noted, which no later pass would judge (they are no longer pending).
            pass.applied = try await applier.applyEndpoint(
                runID: id, on: connection, batchSize: 100, untilShortBatch: true
            ) { notifications in
                try connection.execute(
                    ReceiverSQL.noteJudgements, ["notification_ids": notifications, "grace_seconds": settings.grace])
            }
            // What the hourly sync fetched from Notification History and nobody applied yet: a
            // REFUND it stored first makes Apple's retry to this receiver a duplicate, so its own
            // copy is applied and judged here, within the minute, not left for the night.
            pass.applied += try await applier.applyHistory(runID: id, on: connection, batchSize: 100) { transactions in
                try connection.execute(
                    ReceiverSQL.noteTransactions, ["transaction_ids": transactions, "grace_seconds": settings.grace])
            }
            Failpoint.pass("receiver.applied")
        }
        if pass.applied > 0 { answering?.trigger() }
        // Google Play's notifications: each purchase token asked of the Developer API, its answer
        // stored and noted for judgement, judged below with Apple's.
        if let play {
            pass.playApplied = try await play.pass(runID: runID, on: connection).applied
        }
        let due = try connection.query(ReceiverSQL.dueJudgements, ["limit": timing.judgementsPerPass])
            .map { try $0.decode(String.self, at: 0) }
        if !due.isEmpty {
            // The run lock is held for one judgement of at most `judgementsPerPass` transactions,
            // and not taken at all while a nightly run waits for it (it holds `runWanted`).
            if try !nightlyRunWaits(on: connection), try connection.tryAdvisoryLock(Schema.LockKey.run) {
                let id: Int64
                let judgement: (changes: Differ.QueueChanges, own: [Int64])
                do {
                    defer { _ = try? connection.advisoryUnlock(Schema.LockKey.run) }
                    id = try runID()
                    judgement = try judge(due, runID: id, on: connection)
                }
                pass.judged = due.count
                pass.itemsOpened = judgement.changes.created
                pass.itemsAutoResolved = judgement.changes.autoResolved
                // The policies decide outside the run lock (each decision locks its item, and its
                // rule for the limits, as a person's does), and only the items this judgement
                // opened or changed: the rest of the queue is the nightly run's to decide.
                if let policies {
                    timing.beforePolicies()
                    var log = logger
                    log[metadataKey: "run.id"] = "\(id)"
                    pass.policyDecisions = try PolicyEngine(
                        file: policies, approval: settings.approvalAbove,
                        judgement: try DecisionJudgement.rules(settings), logger: log)
                        .apply(runID: id, items: judgement.own, on: connection).total
                }
            } else {
                // A nightly run holds the lock or waits for it: it judges these transactions
                // itself or this worker does after it, never both at once.
                pass.waitingForNightlyRun = true
            }
        }
        if let run {
            pass.runID = run
            try connection.execute(
                ReceiverSQL.finishRun,
                ["run_id": run, "findings_total": pass.judged, "findings_new": pass.itemsOpened,
                 "counts": try PostgresJSON(encoding: [
                    "notifications_applied": pass.applied, "play_notifications_applied": pass.playApplied,
                    "transactions_judged": pass.judged,
                    "items_opened": pass.itemsOpened, "items_auto_resolved": pass.itemsAutoResolved,
                    "policy_decisions": pass.policyDecisions,
                 ])])
        }
        return pass
    }

    /// Whether a stored notification waits to be applied (the app's endpoint may have stored it).
    private func pendingNotifications(on connection: Connection) throws -> Bool {
        try connection.query(ReceiverSQL.pendingNotifications)[0].decode(Bool.self, at: 0)
    }

    /// Whether a nightly run waits for the run lock (it holds `LockKey.runWanted` meanwhile).
    private func nightlyRunWaits(on connection: Connection) throws -> Bool {
        guard try connection.tryAdvisoryLock(Schema.LockKey.runWanted) else { return true }
        _ = try connection.advisoryUnlock(Schema.LockKey.runWanted)
        return false
    }

    /// The nightly run's findings over exactly these transactions, upserted into the queue with
    /// the nightly fingerprints; the open items of these transactions whose finding is gone are
    /// auto-resolved (82_queue_auto_resolve.sql, told which transactions), so a
    /// reversed refund leaves no revocation to decide. Items of other transactions are left alone.
    /// Returns, with the changes, the pass's own items: those open now that the upsert created,
    /// reopened or changed (what the queue shows of them, or what deciding them would do).
    private func judge(_ transactions: [String], runID: Int64, on connection: Connection) throws
        -> (changes: Differ.QueueChanges, own: [Int64])
    {
        let differ = Differ(relations: settings.relations)
        let parameters = Differ.Parameters(
            settings: settings, runID: runID, judgeBefore: Date().addingTimeInterval(-settings.grace),
            scope: .transactions(transactions), resumesAfter: 0)
        func items() throws -> [Int64: (status: String, digest: String)] {
            var items: [Int64: (status: String, digest: String)] = [:]
            for row in try connection.query(ReceiverSQL.judgedItems) {
                items[try row.decode(Int64.self, "id")] = (
                    try row.decode(String.self, "status"), try row.decode(String.self, "digest"))
            }
            return items
        }
        return try connection.transaction {
            try differ.computeFindings(parameters, evidence: true, on: connection)
            let before = try items()
            let changes = try differ.upsertQueue(
                runID: runID, resolving: .only(transactions), actor: .receiver, on: connection)
            let own = try items().filter { id, now in
                guard now.status == ReviewStatus.open.rawValue else { return false }
                guard let was = before[id] else { return true }
                return was.status != now.status || was.digest != now.digest
            }.keys.sorted()
            try connection.execute(ReceiverSQL.markJudged, ["run_id": runID, "transaction_ids": transactions])
            Failpoint.pass("receiver.judge")
            return (changes, own)
        }
    }

    static func metadata(_ pass: Pass) -> Logger.Metadata {
        [
            "run.id": "\(pass.runID.map(String.init) ?? "-")", "notifications.applied": "\(pass.applied)",
            "play.applied": "\(pass.playApplied)",
            "transactions.judged": "\(pass.judged)", "items.opened": "\(pass.itemsOpened)",
            "items.auto_resolved": "\(pass.itemsAutoResolved)",
            "policy.decided": "\(pass.policyDecisions)",
            "waiting_for_nightly_run": "\(pass.waitingForNightlyRun)",
        ]
    }
}

/// Wakes the worker when a notification is stored (and ``OutboxDelivery`` after a decision), or
/// after a timeout, whichever comes first. A wakeup that arrives during a pass makes the next wait
/// end at once.
public final class ReceiverWakeup: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    public init() {}

    /// Ends the current wait, or the next one.
    public func wake() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns at the next wakeup, after `timeout` (nil: none), or when the task is cancelled.
    func wait(atMost timeout: Duration?) async {
        let timer = timeout.map { timeout in
            Task {
                guard (try? await Task.sleep(for: timeout)) != nil else { return }
                self.wake()
            }
        }
        defer { timer?.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            self.wake()
        }
    }
}

extension ServerAPILookups {
    /// The refund-request answerer over this Server API client (SPEC section 14).
    public func consumptionAnswerer(settings: Settings, logger: Logger) -> ConsumptionAnswerer {
        ConsumptionAnswerer(client: client, settings: settings, logger: logger)
    }
}
