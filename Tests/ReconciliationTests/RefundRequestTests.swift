import AppStore
import AppStoreSimulator
import Foundation
import Logging
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// Get Notification History, answers to refund requests and customers with several Apple IDs
/// (SPEC section 14), against the simulator and a real PostgreSQL.
@Suite("Scenario: Notification History and refund requests")
struct RefundRequestTests {
    static let quiet = Logger(label: "job", factory: { _ in SwiftLogNoOpLogHandler() })

    /// `reconcile notifications sync` as the command runs it.
    static func sync(_ settings: Settings, since: Date? = nil, on connection: Connection) async throws
        -> NotificationHistorySync.Summary
    {
        try await AppleServices.withVerifierAndServerAPI(settings: settings, logger: quiet) { verifier, api in
            let sync = try #require(api).notificationSync(NotificationApplier(verify: verifier.verifyNotification))
            return try #require(try await sync.sync(since: since, on: connection))
        }
    }

    static func settings(
        _ database: TestDatabase, _ sim: AppStoreSimulator, _ running: RunningSimulator, _ state: URL,
        answers: Bool = false
    ) throws -> Settings {
        var settings = try ServerAPIScenarioTests.settings(database: database, sim: sim, running: running, state: state)
        settings.consumption.enabled = answers
        settings.consumption.refundPreference = .ledger
        return settings
    }

    /// A job that also applies notifications, as `reconcile run` builds it.
    static func run(_ settings: Settings, since: Date) async throws -> RunReport {
        try await Stores.withJob(settings: settings, logger: quiet) { try await $0.run(.init(since: since)) }
    }

    @Test func aRefundOnlyInNotificationHistoryIsFoundAndAppliedOnce() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("history_refund")
        let pack = try connection.plantDeliveredPack(from: sim, for: "amy", customer: "amy-apple-id")
        try await sim.withRunning { running in
            let settings = try Self.settings(database, sim, running, state)
            let first = try await Self.run(settings, since: Date().addingTimeInterval(-3 * 86_400))
            #expect(try first.findings.isEmpty)

            // Apple refunds; the app's endpoint is down and never stores the notification.
            _ = try sim.refundTransaction(pack.transactionId)
            let missed = try sim.signNotification(type: .refund, transactionId: pack.transactionId, delivered: false)
            let synced = try await Self.sync(settings, on: connection)
            #expect(synced.stored == 1 && synced.undelivered == 1 && synced.invalid == 0, "\(synced)")

            // The next run looks at the last hour only: no upload, no history asked; the refund
            // comes from Notification History alone.
            let second = try await Self.run(settings, since: Date().addingTimeInterval(-3600))
            #expect(try second.findings.map { "\($0.kind.rawValue) \($0.transactionID ?? "")" }
                == ["refunded_delivery \(pack.transactionId)"])
            #expect(second.notifications.synced == 1 && second.notifications.undelivered == 1)
            let json = try String(
                contentsOfFile: try #require(second.reportDirectory) + "/report.json", encoding: .utf8)
            #expect(json.contains(#""notifications": {"synced": 1, "undelivered": 1}"#))

            // The endpoint comes back and stores the same notification: it is not applied again.
            try connection.execute(
                "INSERT INTO reconcile.notifications (signed_payload) VALUES ($1)",
                [#"{"signedPayload":"\#(missed.signedPayload)"}"#])
            _ = try await Self.run(settings, since: Date().addingTimeInterval(-3600))
            let states = try connection.query(
                """
                SELECT 'endpoint ' || state FROM reconcile.notification_verifications
                UNION ALL SELECT 'history ' || state FROM reconcile.notification_history
                UNION ALL SELECT 'seen ' || source FROM reconcile.notifications_seen
                 ORDER BY 1
                """
            ).map { try $0.decode(String.self, at: 0) }
            #expect(states == ["endpoint duplicate", "history applied", "seen history"])
        }
    }

    /// Apple's pages hold 20 records; every page is read and a record read twice is stored once.
    @Test func everyPageIsReadAndARecordReadAgainIsStoredOnce() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("history_pages")
        let pack = try connection.plantDeliveredPack(from: sim, for: "amy", customer: "amy-id")
        for index in 0..<45 {
            _ = try sim.signNotification(type: .oneTimeCharge, transactionId: pack.transactionId, delivered: index % 9 != 0)
        }
        try await sim.withRunning { running in
            let settings = try Self.settings(database, sim, running, state)
            let first = try await Self.sync(settings, on: connection)
            #expect(first.pages == 3 && first.fetched == 45 && first.stored == 45 && first.undelivered == 5)
            // The next sync overlaps the last hour: the same records again, nothing new.
            let second = try await Self.sync(settings, on: connection)
            #expect(second.fetched == 45 && second.stored == 0)
            let rows = try connection.query(
                "SELECT count(*), count(DISTINCT notification_uuid) FROM reconcile.notification_history WHERE state = 'accepted'")
            #expect(try rows[0].decode(Int.self, at: 0) == 45 && rows[0].decode(Int.self, at: 1) == 45)
        }
    }

    @Test func aRefundRequestForAFullyUsedPackOfAConsentingAccountIsAnsweredOnce() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("consumption_answer")
        let amys = try connection.plantDeliveredPack(from: sim, for: "amy", customer: "amy-id", consumedMilli: 100_000)
        let bobs = try connection.plantDeliveredPack(from: sim, for: "bob", customer: "bob-id", consumedMilli: 100_000)
        let cats = try connection.plantDeliveredPack(from: sim, for: "cat", customer: "cat-id", consumedMilli: 0)
        try connection.execute(
            """
            INSERT INTO reconcile.refund_consent (user_id, consented_at, withdrawn_at)
            VALUES ('amy', now() - interval '1 day', NULL), ('bob', now() - interval '2 days', now() - interval '1 day'),
                   ('cat', now() - interval '1 day', NULL)
            """)
        try await sim.withRunning { running in
            let settings = try Self.settings(database, sim, running, state, answers: true)
            // No run yet: the hourly sync answers from the ledger and the request's own transaction.
            _ = try sim.signNotification(type: .consumptionRequest, transactionId: amys.transactionId)
            _ = try sim.signNotification(type: .consumptionRequest, transactionId: bobs.transactionId)
            _ = try sim.signNotification(
                type: .consumptionRequest, transactionId: cats.transactionId,
                signedDate: Date().addingTimeInterval(-13 * 3600))
            // cat's request is 13 hours old: a sync that reaches back to it (the hourly one was down) is too late.
            let first = try await Self.sync(settings, since: Date().addingTimeInterval(-86_400), on: connection)
            #expect(first.consumption.answered == 1 && first.consumption.expired == 1)

            let puts = sim.notifications.consumptionAnswers
            #expect(puts.map(\.transactionId) == [amys.transactionId], "bob withdrew consent; cat's request expired")
            let body = try #require(puts.first?.body)
            #expect(body.customerConsented && body.deliveryStatus == .delivered)
            #expect(body.consumptionPercentage == 100_000 && body.refundPreference == .decline)
            #expect(!body.sampleContentProvided)

            // Apple re-sends the pending request with a new UUID: no second answer.
            _ = try sim.signNotification(type: .consumptionRequest, transactionId: amys.transactionId)
            _ = try await Self.sync(settings, on: connection)
            #expect(sim.notifications.consumptionAnswers.count == 1)

            // Apple declines the refund: the answer records it.
            _ = try sim.signNotification(type: .refundDeclined, transactionId: amys.transactionId)
            _ = try await Self.sync(settings, on: connection)
            let audit = try connection.query(
                """
                SELECT transaction_id, status, coalesce(outcome, '-'), cardinality(request_uuids),
                       body->>'deliveryStatus'
                  FROM reconcile.consumption_answers ORDER BY id
                """
            ).map {
                "\(try $0.decode(String.self, at: 0)) \(try $0.decode(String.self, at: 1)) "
                    + "\(try $0.decode(String.self, at: 2)) \(try $0.decode(Int.self, at: 3)) "
                    + "\(try $0.decode(String?.self, at: 4) ?? "-")"
            }
            // Oldest request first: cat's expired one.
            #expect(audit == [
                "\(cats.transactionId) expired - 1 -", "\(amys.transactionId) answered declined 2 DELIVERED",
            ])
            // What the review pages show for amy's purchase.
            let shown = try ConsumptionAnswerRecord.find(transactionIDs: [], userID: "amy", on: connection)
            #expect(shown.map(\.status) == [.answered] && shown.map(\.outcome) == [.declined])
            #expect(shown.first?.body?.contains(#""refundPreference": "DECLINE""#) == true)
            let report = try await Self.run(settings, since: Date().addingTimeInterval(-3600))
            #expect(report.consumption == RefundActivity.Consumption(answered: 1, expired: 1, refunded: 0, declined: 1))
        }
    }

    /// Issue 24 item 6: account X received the pack and used it up (credited without an upload
    /// of its own); account Y uploaded the same JWS and consented, and a run verified it. Consent
    /// is X's to give (X holds the delivery): no answer while X has not consented, none while the
    /// run's review item about who holds it is open, then Apple hears X's ledger, `DELIVERED`
    /// and fully used. A purchase nobody holds that no token or username binds (Z only uploaded
    /// it) gets no answer however Z consented.
    @Test func consentIsAskedOfTheAccountHoldingTheGoods() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("consumption_consent_holder")
        func bought(_ customer: String) throws -> CreatedTransaction {
            try sim.createTransaction(SimulatedTransaction(
                productId: "coins3", customer: customer, bundleId: "com.hncs.szj", environment: .production,
                type: .consumable, quantity: 3, purchaseDate: Date().addingTimeInterval(-86_400), price: 90_000,
                currency: "CNY"))
        }
        func upload(_ user: String, _ transaction: CreatedTransaction) throws {
            try connection.plantSignedTransactionUpload(
                transaction.signedTransaction, claiming: transaction.transactionId, by: user, age: "10 hours")
        }
        let pack = try bought("x-apple-id")
        try connection.plantDelivery(
            pack.transactionId, to: "x", product: "coins3", quantity: 3, consumedMilli: 100_000, age: "20 hours")
        try upload("y", pack)
        let unbound = try bought("z-apple-id")
        try upload("z", unbound)
        try connection.execute(
            """
            INSERT INTO reconcile.refund_consent (user_id, consented_at)
            VALUES ('y', now() - interval '1 day'), ('z', now() - interval '1 day')
            """)
        try await sim.withRunning { running in
            let settings = try Self.settings(database, sim, running, state, answers: true)
            // A run verifies the uploads: Y's and Z's claims are known.
            _ = try await Self.run(settings, since: Date().addingTimeInterval(-3 * 86_400))
            _ = try sim.signNotification(type: .consumptionRequest, transactionId: pack.transactionId)
            _ = try sim.signNotification(type: .consumptionRequest, transactionId: unbound.transactionId)
            let first = try await Self.sync(settings, since: Date().addingTimeInterval(-86_400), on: connection)
            #expect(first.consumption.answered == 0, "\(first.consumption)")
            #expect(sim.notifications.consumptionAnswers.isEmpty, "Y's consent is not X's; Z is only an uploader")

            // X consents, and support settles who holds the pack: Apple hears X's ledger.
            try connection.execute(
                "INSERT INTO reconcile.refund_consent (user_id, consented_at) VALUES ('x', now() - interval '1 minute')")
            try connection.execute(
                "UPDATE reconcile.review_items SET status = 'dismissed' WHERE transaction_id = $1", [pack.transactionId])
            let second = try await Self.sync(settings, since: Date().addingTimeInterval(-86_400), on: connection)
            #expect(second.consumption.answered == 1, "\(second.consumption)")
            let puts = sim.notifications.consumptionAnswers
            #expect(puts.map(\.transactionId) == [pack.transactionId])
            let body = try #require(puts.first?.body)
            #expect(body.customerConsented && body.deliveryStatus == .delivered)
            #expect(body.consumptionPercentage == 100_000 && body.refundPreference == .decline)
            let recorded = try connection.query(
                "SELECT user_id FROM reconcile.consumption_answers WHERE status = 'answered'"
            ).map { try $0.decode(String.self, at: 0) }
            #expect(recorded == ["x"])
        }
    }

    @Test func aCustomerBuyingWithTwoAppleIDsHasBothHistoriesRead() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("two_apple_ids")
        // amy uploads one purchase from each of her two Apple IDs; the second ID also bought a pack
        // she never uploaded nor received.
        _ = try connection.plantDeliveredPack(from: sim, for: "amy", customer: "amy-phone")
        _ = try connection.plantDeliveredPack(from: sim, for: "amy", customer: "amy-ipad")
        let lost = try sim.createTransaction(SimulatedTransaction(
            productId: "coins3", customer: "amy-ipad", bundleId: "com.hncs.szj", environment: .production,
            type: .consumable, quantity: 3, purchaseDate: Date().addingTimeInterval(-90_000), price: 90_000,
            currency: "CNY"))
        try await sim.withRunning { running in
            let settings = try Self.settings(database, sim, running, state)
            let report = try await Self.run(settings, since: Date().addingTimeInterval(-3 * 86_400))
            #expect(try report.findings.map { "\($0.kind.rawValue) \($0.transactionID ?? "") \($0.userID ?? "")" }
                == ["missed_delivery \(lost.transactionId) amy"])
        }
    }
}

extension RefundActivity.Consumption {
    init(answered: Int, expired: Int, refunded: Int, declined: Int) {
        self.init()
        self.answered = answered
        self.expired = expired
        self.refunded = refunded
        self.declined = declined
    }
}

@Suite("Consumption answers: the body Apple gets")
struct ConsumptionBodyTests {
    /// (product type, delivery status, consumed milliunits, preference policy) → (percentage sent, preference sent)
    @Test(arguments: [
        ("consumable", "DELIVERED", 100_000, "ledger", 100_000, "DECLINE"),
        ("consumable", "DELIVERED", 40_000, "ledger", 40_000, "GRANT_PRORATED"),
        ("consumable", "DELIVERED", 0, "ledger", 0, "GRANT_FULL"),
        ("consumable", "UNDELIVERED_OTHER", 0, "ledger", 0, "GRANT_FULL"),
        ("consumable", "UNDELIVERED_WRONG_ITEM", 0, "ledger", 0, "GRANT_FULL"),
        ("consumable", "DELIVERED", 100_000, "none", 100_000, nil),
        ("auto_renewable", "DELIVERED", 50_000, "ledger", nil, nil),
    ] as [(String, String, Int, String, Int?, String?)])
    func theLedgerDecidesPercentageAndPreference(
        type: String, status: String, consumed: Int, policy: String, percentage: Int?, preference: String?
    ) throws {
        var settings = Settings.ConsumptionAnswers()
        settings.refundPreference = try #require(.init(rawValue: policy))
        let facts = LedgerFacts(
            buyer: "amy", consented: true, productType: type, deliveryStatus: try #require(.init(rawValue: status)),
            consumedMilli: consumed)
        let body = facts.consumptionRequest(settings)
        #expect(body.consumptionPercentage == percentage)
        #expect(body.refundPreference?.rawValue == preference)
        #expect(body.deliveryStatus.rawValue == status && body.customerConsented && !body.sampleContentProvided)
    }
}

@Suite("Consumption answers: the stored status and outcome")
struct ConsumptionAnswerRecordStateTests {
    /// The texts `reconcile.consumption_answers` holds (its CHECK constraints), and nothing else.
    @Test func aRowReadsOnlyTheTextsTheTableAllows() throws {
        #expect(ConsumptionAnswerRecord.Status.allCases.map(\.rawValue) == ["answered", "expired", "failed"])
        #expect(ConsumptionAnswerRecord.Outcome.allCases.map(\.rawValue) == ["refunded", "declined"])
        let failed = try ConsumptionAnswerRecord.Status.decode(
            postgresText: "failed", type: PostgresType.text, column: "status")
        #expect(failed == .failed)
        #expect(throws: PostgresError.self) {
            try ConsumptionAnswerRecord.Status.decode(postgresText: "pending", type: PostgresType.text, column: "status")
        }
        #expect(throws: PostgresError.self) {
            try ConsumptionAnswerRecord.Outcome?.decode(postgresText: "REFUND", type: PostgresType.text, column: "outcome")
        }
        #expect(try ConsumptionAnswerRecord.Outcome?.decode(postgresText: nil, type: PostgresType.text, column: "outcome") == nil)
    }

    /// Only Apple's two decisions close an answer.
    @Test func onlyARefundOrADeclineDecides() {
        #expect(ConsumptionAnswerRecord.Outcome(decision: .refund) == .refunded)
        #expect(ConsumptionAnswerRecord.Outcome(decision: .refundDeclined) == .declined)
        #expect(ConsumptionAnswerRecord.Outcome(decision: .consumptionRequest) == nil)
        #expect(ConsumptionAnswerRecord.Outcome(decision: .refundReversed) == nil)
    }
}
