import AppStore
import AppStoreSimulator
import Foundation
import Logging
import Postgres
import Reconciliation
import TestSupport
import Testing

/// StoreKit 2 end to end with the App Store Server API: JWS uploads signed by the simulator,
/// a purchase never uploaded found through the customer's history, a refund Apple reports after
/// delivery, and a ledger transaction Apple answers "not found" for in both environments.
@Suite("Scenario: StoreKit 2 and the Server API through the simulator")
struct ServerAPIScenarioTests {
    @Test func findsWhatOnlyTheServerAPIKnows() async throws {
        let (database, connection, sim, state) = try Self.world("sk2_api")
        let dayAgo = Date().addingTimeInterval(-86_400)
        func buy(_ product: String, customer: String) throws -> CreatedTransaction {
            try sim.createTransaction(SimulatedTransaction(
                productId: product, customer: customer, bundleId: "com.hncs.szj", environment: .production,
                type: .consumable, quantity: 1, purchaseDate: dayAgo, price: 6000, currency: "CNY"))
        }
        let uploaded = try buy("coin42", customer: "amy")
        let neverUploaded = try buy("coin42", customer: "amy")
        let refunded = try buy("coin42", customer: "amy")
        let bobs = try buy("coin42", customer: "bob")
        for (user, transaction) in [("amy", uploaded), ("amy", refunded), ("bob", bobs)] {
            try connection.plantSignedTransactionUpload(
                transaction.signedTransaction, claiming: transaction.transactionId, by: user, age: "20 hours")
            try connection.plantDelivery(transaction.transactionId, to: user, product: "coin42", age: "20 hours")
        }
        try connection.plantDelivery("999000111", to: "bob", product: "coin4886", age: "19 hours")
        _ = try sim.refundTransaction(refunded.transactionId)

        try await sim.withRunning { running in
            let settings = try Self.settings(database: database, sim: sim, running: running, state: state)
            let report = try await Self.run(settings, since: Date().addingTimeInterval(-3 * 86_400))
            let found = try Set(report.findings.map { "\($0.kind.rawValue) \($0.transactionID ?? "") \($0.userID ?? "")" })
            #expect(found == [
                "missed_delivery \(neverUploaded.transactionId) amy",
                "refunded_delivery \(refunded.transactionId) amy",
                "unverified_delivery 999000111 bob",
            ])
            #expect(report.status == "completed")
            let lookup = try connection.query(
                "SELECT result FROM reconcile.transaction_lookups WHERE transaction_id = '999000111'")
            #expect(try lookup.first?.decode(String.self, at: 0) == "not_found")
        }
    }

    /// A lookup Apple put off is asked again by the next run, even when the next run's window no
    /// longer covers the delivery, and its answer is judged then.
    @Test func aLookupApplePutOffIsAskedAgainAndJudgedByALaterRun() async throws {
        let (database, connection, sim, state) = try Self.world("sk2_api_later")
        try connection.plantDelivery("999000222", to: "bob", product: "coin4886", age: "19 hours")
        try await sim.withRunning { running in
            let settings = try Self.settings(database: database, sim: sim, running: running, state: state)
            let second = try await Self.unresolvedThenSettled(
                by: SimulatorFaults(apiErrorCode: 5_000_001), settings: settings, sim: sim)
            #expect(try second.findings.map { "\($0.kind.rawValue) \($0.transactionID ?? "")" }
                == ["unverified_delivery 999000222"])
            let lookup = try connection.query(
                "SELECT result, attempts FROM reconcile.transaction_lookups WHERE transaction_id = '999000222'")
            #expect(try lookup.first?.decode(String.self, at: 0) == "not_found")
            #expect(try lookup.first?.decode(Int.self, at: 1) == 2)
        }
    }

    /// Answers that fail Apple's signature checks are no answers: the run says it has unresolved
    /// work, judges nothing on them, and the next healthy run settles them.
    @Test func aForgedServerAPIAnswerLeavesTheRunUnresolvedAndIsAskedAgain() async throws {
        let (database, connection, sim, state) = try Self.world("sk2_api_forged")
        let bought = try sim.createTransaction(SimulatedTransaction(
            productId: "coin42", customer: "cat", bundleId: "com.hncs.szj", environment: .production,
            type: .consumable, quantity: 1, purchaseDate: Date().addingTimeInterval(-86_400), price: 6000, currency: "CNY"))
        // Delivered, never uploaded: only Get Transaction Info can confirm it.
        try connection.plantDelivery(bought.transactionId, to: "cat", product: "coin42", age: "20 hours")
        try await sim.withRunning { running in
            let settings = try Self.settings(database: database, sim: sim, running: running, state: state)
            let second = try await Self.unresolvedThenSettled(
                by: SimulatorFaults(forgedJWSShare: 1), settings: settings, sim: sim)
            #expect(try second.findings.isEmpty, "Apple confirms the delivered purchase")
            let lookup = try connection.query(
                "SELECT result FROM reconcile.transaction_lookups WHERE transaction_id = $1", [bought.transactionId])
            #expect(try lookup.first?.decode(String.self, at: 0) == "found")
        }
    }

    /// A run over the last three days while the simulator has `faults`: it has unresolved work and
    /// judges nothing on what Apple did not (truly) answer. Then a healthy run over the last hour
    /// only, which must not need the purchase (older than that) in its window: it completes. Returns
    /// the second run's report.
    static func unresolvedThenSettled(
        by faults: SimulatorFaults, settings: Settings, sim: AppStoreSimulator
    ) async throws -> RunReport {
        sim.state.faults = faults
        let first = try await run(settings, since: Date().addingTimeInterval(-3 * 86_400))
        #expect(first.status == "completed_with_unresolved")
        #expect(try first.findings.isEmpty, "nothing judged without a trustworthy answer")
        sim.state.faults = .none
        let second = try await run(settings, since: Date().addingTimeInterval(-3600))
        #expect(second.status == "completed")
        return second
    }

    /// A fresh migrated database and a quiet simulator with its own state directory.
    static func world(_ name: String) throws -> (TestDatabase, Connection, AppStoreSimulator, URL) {
        let (database, connection) = try TestDatabase.migrated(name)
        let state = Scratch.root.appendingPathComponent("sim-\(UUID().uuidString)")
        var logger = Logger(label: "sim")
        logger.logLevel = .critical
        let sim = try AppStoreSimulator(configuration: .init(stateDirectory: state, logger: logger))
        return (database, connection, sim, state)
    }

    static func settings(
        database: TestDatabase, sim: AppStoreSimulator, running: RunningSimulator, state: URL
    ) throws -> Settings {
        try Settings(lookup: running.jobEnvironment.merging([
            "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
            "RECONCILE_REPORT_DIR": state.appendingPathComponent("reports").path,
        ]) { $1 }.lookup)
    }

    static func run(_ settings: Settings, since: Date, serverAPI: Bool = true) async throws -> RunReport {
        let quiet = Logger(label: "job", factory: { _ in SwiftLogNoOpLogHandler() })
        return try await AppleServices.withVerifierAndServerAPI(settings: settings, logger: quiet) { verifier, api in
            #expect((api != nil) == serverAPI)
            return try await ReconciliationJob(
                settings: settings, verifier: verifier, serverAPI: api, logger: quiet
            ).run(.init(since: since))
        }
    }
}
