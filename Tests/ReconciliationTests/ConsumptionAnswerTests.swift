import AppStore
import AppStoreSimulator
import Foundation
import Logging
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// Answers to refund requests (SPEC section 14) where the ledger, Apple's decisions or other
/// processes make them harder than the plain case: a non-consumable credited through its restore,
/// a request after Apple decided an earlier one, two processes answering at once, and a
/// subscription Apple asks about before any run saw it.
@Suite("Scenario: answers to refund requests")
struct ConsumptionAnswerTests {
    static let quiet = Logger(label: "job", factory: { _ in SwiftLogNoOpLogHandler() })

    /// A non-consumable bought (T1) while the app was killed; the next day the customer restored
    /// it (StoreKit 1: a new transaction T2 whose original is T1) and the app credited the
    /// restore. SPEC section 5 counts that delivery for T1, and so do the nightly rules; Apple's
    /// refund request names T1 and hears `DELIVERED`, not `UNDELIVERED_OTHER` with `GRANT_FULL`
    /// (the customer refunded and keeping the unlock).
    @Test func aNonConsumableCreditedThroughItsRestoreIsReportedDelivered() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("consumption_restore")
        let token = UUID()
        try connection.execute(
            "INSERT INTO reconcile.account_tokens (app_account_token, user_id) VALUES ($1, 'amy')", [token])
        var purchase = SimulatedTransaction(
            productId: "pro_unlock", customer: "amy-id", bundleId: "com.hncs.szj", environment: .production,
            type: .nonConsumable, quantity: 1, purchaseDate: Date().addingTimeInterval(-2 * 86_400),
            appAccountToken: token, price: 30_000, currency: "CNY")
        let bought = try sim.createTransaction(purchase)
        purchase.originalTransactionId = bought.transactionId
        purchase.purchaseDate = Date().addingTimeInterval(-86_400)
        let restored = try sim.createTransaction(purchase)
        try connection.plantSignedTransactionUpload(
            restored.signedTransaction, claiming: restored.transactionId, by: "amy", age: "20 hours")
        try connection.plantDelivery(restored.transactionId, to: "amy", product: "pro_unlock", age: "20 hours")
        try connection.execute(
            "INSERT INTO reconcile.refund_consent (user_id, consented_at) VALUES ('amy', now() - interval '1 day')")
        try await sim.withRunning { running in
            let settings = try RefundRequestTests.settings(database, sim, running, state, answers: true)
            let night = try await RefundRequestTests.run(settings, since: Date().addingTimeInterval(-3 * 86_400))
            let findings = try night.findings.map { "\($0.kind.rawValue) \($0.transactionID ?? "")" }
            #expect(findings.isEmpty, "the nightly rules count the restore's delivery for the purchase: \(findings)")
            let family = try connection.query(
                "SELECT count(*) FROM reconcile.apple_transactions WHERE original_transaction_id = $1",
                [bought.transactionId])[0].decode(Int.self, at: 0)
            #expect(family == 2, "both the purchase and its restore are in the white table")

            _ = try sim.signNotification(type: .consumptionRequest, transactionId: bought.transactionId)
            _ = try await RefundRequestTests.sync(settings, since: Date().addingTimeInterval(-86_400), on: connection)
            let body = try #require(sim.notifications.consumptionAnswers.last?.body)
            #expect(
                body.deliveryStatus == .delivered && body.refundPreference != .grantFull,
                "Apple was told \(body.deliveryStatus.rawValue), \(body.refundPreference?.rawValue ?? "no preference")")
        }
    }

    /// Apple asks (R1) while the customer has not consented; Apple then declines the refund on its
    /// own (REFUND_DECLINED) and the customer consents. R1 is not answered after Apple's decision:
    /// it is recorded expired with Apple's outcome, so nothing is left open. A week later the
    /// customer asks again (R2, "a new one"): Apple hears an answer to it.
    @Test func aRequestAfterApplesDecisionIsAnsweredEvenIfTheOldOneWasNot() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("consumption_after_decision")
        let pack = try connection.plantDeliveredPack(from: sim, for: "amy", customer: "amy-id", consumedMilli: 100_000)
        try await sim.withRunning { running in
            let settings = try RefundRequestTests.settings(database, sim, running, state, answers: true)
            _ = try sim.signNotification(type: .consumptionRequest, transactionId: pack.transactionId)
            let first = try await RefundRequestTests.sync(settings, since: Date().addingTimeInterval(-86_400), on: connection)
            #expect(first.consumption.answered == 0 && first.consumption.waiting == 1, "no consent yet")

            _ = try sim.signNotification(type: .refundDeclined, transactionId: pack.transactionId)
            try connection.execute(
                "INSERT INTO reconcile.refund_consent (user_id, consented_at) VALUES ('amy', now() - interval '1 minute')")
            let decided = try await RefundRequestTests.sync(settings, on: connection)
            #expect(decided.consumption.answered == 0 && decided.consumption.expired == 1)
            #expect(sim.notifications.consumptionAnswers.isEmpty, "Apple had decided: nothing to answer")

            _ = try sim.signNotification(type: .consumptionRequest, transactionId: pack.transactionId)
            let second = try await RefundRequestTests.sync(settings, on: connection)
            #expect(second.consumption.answered == 1)
            #expect(sim.notifications.consumptionAnswers.count == 1, "the request after Apple's decision is answered")
            #expect(try Self.audit(connection) == ["expired declined 1", "answered - 1"])
        }
    }

    /// An answer recorded open although Apple's decision was already taken into account (written
    /// before this build, or recorded while the decision was being stored) is closed by the next
    /// request about the transaction, which is answered rather than joined to it.
    @Test func anAnswerLeftOpenAfterApplesDecisionIsClosedByTheNextRequest() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("consumption_stale_answer")
        let pack = try connection.plantDeliveredPack(from: sim, for: "amy", customer: "amy-id", consumedMilli: 100_000)
        try connection.execute(
            "INSERT INTO reconcile.refund_consent (user_id, consented_at) VALUES ('amy', now() - interval '1 day')")
        try await sim.withRunning { running in
            let settings = try RefundRequestTests.settings(database, sim, running, state, answers: true)
            _ = try sim.signNotification(
                type: .refundDeclined, transactionId: pack.transactionId, signedDate: Date().addingTimeInterval(-3600))
            _ = try await RefundRequestTests.sync(settings, since: Date().addingTimeInterval(-86_400), on: connection)
            try connection.execute(
                """
                INSERT INTO reconcile.consumption_answers (transaction_id, environment, user_id, request_uuids, requested_at, status)
                VALUES ($1, 'Production', 'amy', ARRAY[gen_random_uuid()], now() - interval '2 hours', 'answered')
                """, [pack.transactionId])

            _ = try sim.signNotification(type: .consumptionRequest, transactionId: pack.transactionId)
            let sync = try await RefundRequestTests.sync(settings, on: connection)
            #expect(sync.consumption.answered == 1 && sim.notifications.consumptionAnswers.count == 1)
            #expect(try Self.audit(connection) == ["answered declined 1", "answered - 1"])
        }
    }

    /// The receiver's worker, `reconcile notifications sync` (an hourly cron) and the nightly run
    /// all answer refund requests. Two reading the same request pending at once: one answers it,
    /// the other leaves it to the first, neither sends twice nor fails on
    /// consumption_answers_undecided_idx. A lock on the consent table holds the first at the
    /// consent check while the second tries (without the turn-taking, both wait there).
    @Test func twoProcessesAnsweringAtOnceSendOneAnswerAndNeitherFails() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("consumption_twice")
        let pack = try connection.plantDeliveredPack(from: sim, for: "amy", customer: "amy-id", consumedMilli: 100_000)
        try connection.execute(
            "INSERT INTO reconcile.refund_consent (user_id, consented_at) VALUES ('amy', now() - interval '1 day')")
        _ = try sim.signNotification(type: .consumptionRequest, transactionId: pack.transactionId)
        try await sim.withRunning { running in
            // Stored and claimed, not answered.
            let storing = try RefundRequestTests.settings(database, sim, running, state, answers: false)
            _ = try await RefundRequestTests.sync(storing, since: Date().addingTimeInterval(-86_400), on: connection)
            let settings = try RefundRequestTests.settings(database, sim, running, state, answers: true)
            let gate = Session(connection: try database.connect())
            let watcher = Session(connection: try database.connect())
            try gate.connection.execute("BEGIN")
            try gate.connection.execute("LOCK TABLE reconcile.refund_consent IN ACCESS EXCLUSIVE MODE")
            // On a thread of its own (the answerers block cooperative threads in libpq): let go once
            // both answerers wait on the consent table, or one has finished.
            let finished = Finished()
            let released = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                let end = Date().addingTimeInterval(60)
                while Date() < end, !finished.any {
                    let waiting = (try? watcher.connection.query(
                        """
                        SELECT count(*) FROM pg_stat_activity
                         WHERE datname = current_database() AND wait_event_type = 'Lock'
                           AND query LIKE '%refund_consent%' AND pid <> pg_backend_pid()
                        """)[0].decode(Int.self, at: 0)) ?? 0
                    if waiting >= 2 { break }
                    Thread.sleep(forTimeInterval: 0.05)
                }
                _ = try? gate.connection.execute("COMMIT")
                released.signal()
            }
            let sessions = [Session(connection: try database.connect()), Session(connection: try database.connect())]
            let results = try await AppleServices.withVerifierAndServerAPI(settings: settings, logger: Self.quiet) {
                _, api in
                let answerer = try #require(api).consumptionAnswerer(settings: settings, logger: Self.quiet)
                async let first = Self.attempt(answerer, on: sessions[0], finished: finished)
                async let second = Self.attempt(answerer, on: sessions[1], finished: finished)
                return [await first, await second]
            }
            released.wait()
            #expect(sim.notifications.consumptionAnswers.count == 1, "Apple got \(sim.notifications.consumptionAnswers.count) answers to one request")
            #expect(results.sorted() == ["answered 0", "answered 1"], "\(results)")
            #expect(try Self.audit(connection) == ["answered - 1"])
        }
    }

    /// A subscription renewal Apple asks about, answered by `reconcile notifications sync` before
    /// any run applied the request's transaction: no upload carried it (renewals happen on Apple's
    /// side) and the optional product catalogue is empty. The request's own signed transaction
    /// says `Auto-Renewable Subscription`: the answer carries no consumptionPercentage (SPEC
    /// section 14).
    @Test func aSubscriptionRequestAnsweredBySyncOmitsTheConsumptionPercentage() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("consumption_subscription")
        let token = UUID()
        try connection.execute(
            "INSERT INTO reconcile.account_tokens (app_account_token, user_id) VALUES ($1, 'amy')", [token])
        var renewal = SimulatedTransaction(
            productId: "vip_month", customer: "amy-id", bundleId: "com.hncs.szj", environment: .production,
            type: .autoRenewable, quantity: 1, purchaseDate: Date().addingTimeInterval(-86_400),
            appAccountToken: token, price: 30_000, currency: "CNY")
        renewal.expiresDate = Date().addingTimeInterval(29 * 86_400)
        let renewed = try sim.createTransaction(renewal)
        try connection.execute(
            "INSERT INTO reconcile.refund_consent (user_id, consented_at) VALUES ('amy', now() - interval '1 day')")
        _ = try sim.signNotification(type: .consumptionRequest, transactionId: renewed.transactionId)
        try await sim.withRunning { running in
            let settings = try RefundRequestTests.settings(database, sim, running, state, answers: true)
            _ = try await RefundRequestTests.sync(settings, since: Date().addingTimeInterval(-86_400), on: connection)
            let body = try #require(sim.notifications.consumptionAnswers.last?.body)
            #expect(
                body.consumptionPercentage == nil,
                "a subscription's answer carried consumptionPercentage \(body.consumptionPercentage.map(String.init) ?? "-")")
        }
    }

    /// Issue 36 item 7: a purchase's token binds `paying-player`; the app credited
    /// `holder-player`, who consented and used it all. Who holds it is disputed between accounts
    /// (a `wrong_account` finding) before any item says so, and Apple hears nothing on
    /// holder-player's consent: not from the hourly sync, which answers before any run put the
    /// purchases in the white table (judged from the ledger's binding), nor from the run that
    /// then applies and judges them (its answers run beside its diff: judged by the nightly
    /// rules, or by the items). D1 was uploaded by holder-player, D2 only named by the request.
    /// A consenting buyer's own purchase asked about at the same time is answered.
    @Test func aTransactionDisputedBetweenAccountsIsNotAnsweredBeforeItsItemExists() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("consumption_disputed")
        let token = UUID()
        try connection.execute(
            "INSERT INTO reconcile.account_tokens (app_account_token, user_id) VALUES ($1, 'paying-player')", [token])
        func bought() throws -> CreatedTransaction {
            try sim.createTransaction(SimulatedTransaction(
                productId: "coins3", customer: "paying-apple-id", bundleId: "com.hncs.szj", environment: .production,
                type: .consumable, quantity: 3, purchaseDate: Date().addingTimeInterval(-5 * 3600), appAccountToken: token,
                price: 90_000, currency: "CNY"))
        }
        let applied = try bought(), unapplied = try bought()
        try connection.plantSignedTransactionUpload(
            applied.signedTransaction, claiming: applied.transactionId, by: "holder-player", age: "4 hours")
        for purchase in [applied, unapplied] {
            try connection.plantDelivery(
                purchase.transactionId, to: "holder-player", product: "coins3", quantity: 3, consumedMilli: 100_000,
                age: "4 hours")
        }
        let plain = try connection.plantDeliveredPack(from: sim, for: "amy", customer: "amy-id", consumedMilli: 100_000)
        try connection.execute(
            """
            INSERT INTO reconcile.refund_consent (user_id, consented_at)
            VALUES ('holder-player', now() - interval '1 day'), ('amy', now() - interval '1 day')
            """)
        try await sim.withRunning { running in
            var settings = try RefundRequestTests.settings(database, sim, running, state, answers: true)
            for purchase in [applied, unapplied, plain] {
                _ = try sim.signNotification(type: .consumptionRequest, transactionId: purchase.transactionId)
            }
            let synced = try await RefundRequestTests.sync(settings, since: Date().addingTimeInterval(-86_400), on: connection)
            #expect(synced.consumption.answered == 1 && synced.consumption.waiting == 2, "\(synced.consumption)")
            #expect(
                sim.notifications.consumptionAnswers.map(\.transactionId) == [plain.transactionId],
                "Apple heard about a purchase disputed between accounts")

            // Judged once their grace period is over: the items say what the answers already knew.
            settings.grace = 60
            _ = try await RefundRequestTests.run(settings, since: Date().addingTimeInterval(-3 * 86_400))
            let items = try connection.query(
                "SELECT kind || ' ' || transaction_id FROM reconcile.review_items ORDER BY 1"
            ).map { try $0.decode(String.self, at: 0) }
            #expect(
                Set(items).isSuperset(of: [
                    "wrong_account \(applied.transactionId)", "wrong_account \(unapplied.transactionId)",
                ]), "\(items)")
            #expect(sim.notifications.consumptionAnswers.map(\.transactionId) == [plain.transactionId])
        }
    }

    /// Issue 36 item 9: Apple takes 2.5 s to accept an answer and the server ends a transaction
    /// left idle for 1 s (`idle_in_transaction_session_timeout`). No transaction is open while
    /// Apple is called: the answer is sent once and recorded, and the next pass sends nothing.
    @Test func aSlowAppleAnswerIsSentOnceAndRecordedUnderAnIdleTransactionTimeout() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("consumption_idle_timeout")
        let pack = try connection.plantDeliveredPack(from: sim, for: "amy", customer: "amy-id", consumedMilli: 100_000)
        try connection.execute(
            "INSERT INTO reconcile.refund_consent (user_id, consented_at) VALUES ('amy', now() - interval '1 day')")
        _ = try sim.signNotification(type: .consumptionRequest, transactionId: pack.transactionId)
        try await sim.withRunning { running in
            let storing = try RefundRequestTests.settings(database, sim, running, state, answers: false)
            _ = try await RefundRequestTests.sync(storing, since: Date().addingTimeInterval(-86_400), on: connection)
            var slowSettings = try RefundRequestTests.settings(database, sim, running, state, answers: true)
            slowSettings.appleTimeout = 20
            let settings = slowSettings
            sim.state.faults = SimulatorFaults(latencyMilliseconds: 2500)
            let session = Session(connection: try database.connect())
            try session.connection.execute("SET idle_in_transaction_session_timeout = '1s'")
            let summaries = try await AppleServices.withVerifierAndServerAPI(settings: settings, logger: Self.quiet) {
                _, api in
                let answerer = try #require(api).consumptionAnswerer(settings: settings, logger: Self.quiet)
                let first = try await answerer.answerPending(on: session.connection)
                let again = try await answerer.answerPending(on: try database.connect())
                return [first.answered, again.answered]
            }
            sim.state.faults = .none
            #expect(summaries == [1, 0])
            #expect(sim.notifications.consumptionAnswers.count == 1, "Apple got \(sim.notifications.consumptionAnswers.count) answers")
            #expect(try Self.audit(connection) == ["answered - 1"])
            #expect(try connection.queryFirst("SELECT 1 FROM reconcile.consumption_leases") == nil, "the lease given back")
        }
    }

    /// A request whose transaction another process has leased is left to it (nothing sent, the
    /// request waiting); once that lease ran out (its process died mid-call), it is taken again
    /// and answered.
    @Test func aLeasedRequestIsLeftAndOneWhoseLeaseRanOutIsTakenAgain() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("consumption_lease")
        let pack = try connection.plantDeliveredPack(from: sim, for: "amy", customer: "amy-id", consumedMilli: 100_000)
        try connection.execute(
            "INSERT INTO reconcile.refund_consent (user_id, consented_at) VALUES ('amy', now() - interval '1 day')")
        _ = try sim.signNotification(type: .consumptionRequest, transactionId: pack.transactionId)
        try connection.execute(
            """
            INSERT INTO reconcile.consumption_leases (transaction_id, holder, held_by, leased_until)
            VALUES ($1, gen_random_uuid(), 'elsewhere:1', now() + interval '10 minutes')
            """, [pack.transactionId])
        try await sim.withRunning { running in
            let settings = try RefundRequestTests.settings(database, sim, running, state, answers: true)
            let held = try await RefundRequestTests.sync(settings, since: Date().addingTimeInterval(-86_400), on: connection)
            #expect(held.consumption.answered == 0 && held.consumption.waiting == 1, "\(held.consumption)")
            #expect(sim.notifications.consumptionAnswers.isEmpty)

            try connection.execute("UPDATE reconcile.consumption_leases SET leased_until = now() - interval '1 second'")
            let taken = try await RefundRequestTests.sync(settings, on: connection)
            #expect(taken.consumption.answered == 1, "\(taken.consumption)")
            #expect(sim.notifications.consumptionAnswers.count == 1)
            #expect(try Self.audit(connection) == ["answered - 1"])
            #expect(try connection.queryFirst("SELECT 1 FROM reconcile.consumption_leases") == nil)
        }
    }

    /// Each answer's status, outcome and how many requests it took into account, oldest first.
    static func audit(_ connection: Connection) throws -> [String] {
        try connection.query(
            """
            SELECT status || ' ' || coalesce(outcome, '-') || ' ' || cardinality(request_uuids)
              FROM reconcile.consumption_answers ORDER BY id
            """
        ).map { try $0.decode(String.self, at: 0) }
    }

    /// One answering pass on its own session: how many it answered, or why it failed.
    static func attempt(_ answerer: ConsumptionAnswerer, on session: Session, finished: Finished) async -> String {
        defer { finished.note() }
        do { return "answered \(try await answerer.answerPending(on: session.connection).answered)" } catch {
            return "failed: \(error)"
        }
    }

    /// A connection used by one task at a time.
    struct Session: @unchecked Sendable { let connection: Connection }

    /// Whether an answering pass has finished.
    final class Finished: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        var any: Bool { lock.withLock { count > 0 } }
        func note() { lock.withLock { count += 1 } }
    }
}
