import AppStore
import AppStoreSimulator
import Crypto
import Foundation
import Logging
import Postgres
import Reconciliation
import TestSupport
import Testing

/// Verifies an upload whose payload describes its transaction: `tx=ID;orig=ID;type=T;days=N;bundle=B`
/// (every field but `tx` optional; `type=none` leaves Apple's product type out, as verifyReceipt's
/// answers do, so that the catalogue decides; `days` is the purchase's age).
struct DescribedVerifier: UploadVerifier {
    func verify(_ upload: Upload, attempt: Int) async throws -> Verdict {
        var fields: [String: String] = [:]
        for part in upload.payload.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            if pair.count == 2 { fields[pair[0]] = pair[1] }
        }
        guard let id = fields["tx"] else {
            return .invalid(code: "signature", reason: "the signature does not verify", appleStatus: nil)
        }
        let days = Double(fields["days"] ?? "1") ?? 1
        let bundle = fields["bundle"] ?? "com.hncs.szj"
        let type = fields["type"] ?? "consumable"
        let transaction = AppleTransactionRecord(
            transactionID: id, originalTransactionID: fields["orig"] ?? id, productID: fields["product"] ?? "coin42",
            productType: type == "none" ? nil : type, bundleID: bundle, environment: .production,
            purchaseDate: Date().addingTimeInterval(-days * 86_400), priceMilli: 6000, currency: "CNY",
            signedDate: Date(), source: "jws")
        return .verified(VerifiedUpload(method: "jws", appleStatus: nil, environment: .production,
                                        bundleID: bundle, transactions: [transaction]))
    }
}

/// Issue 23: a chain of nightly runs finds what one run over the whole history finds. Each test is
/// one variant the randomized multi-night check found on main at a261791, and fails there: the
/// nightly run that first sees the account, the upload or the ledger row flags what it changes.
@Suite("Nightly runs equal one run over the whole history", .serialized)
struct NightlyEqualsHistoryTests {
    let database: TestDatabase
    let reports: URL
    let connection: Connection

    init() throws {
        database = try TestDatabase.create("nightly_history")
        reports = Scratch.root.appendingPathComponent("reports-\(UUID().uuidString)")
        connection = try database.connect()
        _ = try Schema.migrate(connection)
        try connection.execute(
            "INSERT INTO reconcile.products (product_id, product_type, price_milli, currency) VALUES ('coin42', 'consumable', 6000, 'CNY')")
    }

    static let quiet = Logger(label: "job", factory: { _ in SwiftLogNoOpLogHandler() })

    func night(since: Date? = nil, bundles: String = "com.hncs.szj") async throws -> Set<String> {
        let settings = try Settings(lookup: [
            "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": bundles, "RECONCILE_REPORT_DIR": reports.path,
        ].lookup)
        let report = try await ReconciliationJob(settings: settings, verifier: DescribedVerifier(), logger: Self.quiet)
            .run(.init(since: since))
        return try Self.found(report)
    }

    /// The first night: a window of a week, so that every later night is a nightly window run.
    func firstNight(bundles: String = "com.hncs.szj") async throws -> Set<String> {
        try await night(since: Date().addingTimeInterval(-7 * 86_400), bundles: bundles)
    }

    static func found(_ report: RunReport) throws -> Set<String> {
        Set(try report.findings.map { "\($0.kind.rawValue) \($0.transactionID ?? "") \($0.userID ?? "-")" })
    }

    func upload(_ user: String, _ payload: String, username: String? = nil, token: String? = nil, age: String = "1 hour")
        throws
    {
        try connection.execute(
            """
            INSERT INTO reconcile.receipt_uploads
                (user_id, kind, payload, application_username, app_account_token, uploaded_at)
            VALUES ($1, 'signed_transaction', $2, $3, $4::uuid, now() - $5::interval)
            """, [user, payload, username, token, age])
    }

    func credit(_ transaction: String, to user: String, age: String = "1 hour") throws {
        try connection.plantDelivery(transaction, to: user, product: "coin42", age: age)
    }

    static func sha256(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Bob uploads a purchase whose applicationUsername hashes alice, whom the job does not know yet:
    /// bob is the buyer and was credited, nothing to flag. The night alice uploads her first
    /// purchase, the buyer of bob's is alice: a wrong_account, that night.
    @Test func anAccountsFirstUploadRejudgesWhatItsHashedUsernameNamed() async throws {
        try upload("bob", "tx=w-1", username: Self.sha256("alice"))
        try credit("w-1", to: "bob")
        #expect(try await firstNight().isEmpty)

        try upload("alice", "tx=w-2")
        try credit("w-2", to: "alice")
        #expect(try await night() == ["wrong_account w-1 alice"])
        #expect(try await night() == ["wrong_account w-1 alice"], "and the next night keeps it")
    }

    /// The same with an appAccountToken equal to an account id that is a UUID.
    @Test func anAccountsFirstUploadRejudgesWhatItsTokenNamed() async throws {
        let alice = "6f1c3a52-6a0e-4f7e-9d55-2f3c0b7d9a11"
        try upload("bob", "tx=w-3", token: alice)
        try credit("w-3", to: "bob")
        #expect(try await firstNight().isEmpty)

        try upload(alice, "tx=w-4")
        try credit("w-4", to: alice)
        #expect(try await night() == ["wrong_account w-3 \(alice)"])
    }

    /// Alice never uploads: her first ledger row (an unrelated credit) makes her known. The buyer
    /// rule resolves against every account the job knows, the ledger's included.
    @Test func anAccountsFirstLedgerRowRejudgesWhatNamedIt() async throws {
        try upload("bob", "tx=w-5", username: Self.sha256("alice"))
        try credit("w-5", to: "bob")
        #expect(try await firstNight().isEmpty)

        try upload("carol", "tx=w-6")
        try credit("w-6", to: "alice")
        #expect(try await night() == ["wrong_account w-5 alice", "wrong_account w-6 carol"])
    }

    /// Alice becomes known through her first token row; then her last trace goes and the buyer is
    /// bob again: the wrong_account resolves itself the night the token is deleted.
    @Test func anAccountKnownOnlyByItsTokenComesAndGoes() async throws {
        try upload("bob", "tx=w-7", username: "alice")
        try credit("w-7", to: "bob")
        #expect(try await firstNight().isEmpty)

        try connection.execute(
            "INSERT INTO reconcile.account_tokens (app_account_token, user_id) VALUES ('0c9a1d2e-1111-4222-8333-444455556666', 'alice')")
        #expect(try await night() == ["wrong_account w-7 alice"])

        try connection.execute("DELETE FROM reconcile.account_tokens WHERE user_id = 'alice'")
        #expect(try await night().isEmpty)
    }

    /// An upload stored tonight with an uploaded_at days before the last run's window (an app that
    /// queued it, a lagging replica) is read by the next run: its purchase, never credited, is a
    /// missed_delivery; a refund it carries of credited goods is a refunded_delivery.
    @Test func anUploadStoredLateWithAnOldTimestampIsRead() async throws {
        try upload("dave", "tx=l-0")
        try credit("l-0", to: "dave")
        #expect(try await firstNight().isEmpty)

        try upload("erin", "tx=l-1;days=10", age: "10 days")
        #expect(try await night() == ["missed_delivery l-1 erin"])
        #expect(try connection.query(
            "SELECT count(*) FROM reconcile.upload_verifications WHERE upload_id = (SELECT max(id) FROM reconcile.receipt_uploads)"
        )[0].decode(Int.self, at: 0) == 1)
        #expect(try connection.query("SELECT count(*) FROM reconcile.upload_arrivals")[0].decode(Int.self, at: 0) == 0,
                "the run took the arrivals it enqueued")
    }

    /// A late upload whose username names alice, of a purchase credited to bob, is a wrong_account
    /// (not a stale unverified_delivery against bob).
    @Test func aLateUploadNamingAnotherAccountIsAWrongAccount() async throws {
        try upload("alice", "tx=l-2")
        try credit("l-2", to: "alice")
        try credit("l-3", to: "bob", age: "9 days")
        _ = try await firstNight()

        try upload("bob", "tx=l-3;days=9", username: "alice", age: "9 days")
        #expect(try await night() == ["wrong_account l-3 alice"])
    }

    /// The catalogue changes (a product once sold as a non-consumable is a consumable): a
    /// transaction with no review item becomes a finding, and the next run judges the whole
    /// history to find it, as a run without a watermark would.
    @Test func aCatalogueChangeJudgesTheWholeHistoryOnce() async throws {
        try connection.execute("UPDATE reconcile.products SET product_type = 'non_consumable'")
        try upload("fay", "tx=c-1;type=none;days=6")
        try upload("fay", "tx=c-2;orig=c-1;type=none;days=6")
        try credit("c-1", to: "fay", age: "6 days")
        #expect(try await firstNight().isEmpty, "c-2 restores c-1, delivered once")
        #expect(try await night().isEmpty)

        try connection.execute("UPDATE reconcile.products SET product_type = 'consumable'")
        #expect(try await night() == ["missed_delivery c-2 fay"])
    }

    /// A setting changes what an upload is: the operator stops accepting a bundle id. The uploads
    /// verified for it long ago are foreign_bundle findings the next night, as one run over the
    /// whole history with the new setting finds them (the whole-history pass keeps every upload of
    /// a bundle it does not accept, not only those the run verified); accepted again, they resolve.
    @Test func aBundleIdNoLongerAcceptedMakesItsOldUploadsForeign() async throws {
        try upload("gus", "tx=b-1;days=6;bundle=com.hncs.szj.lite", age: "6 days")
        try credit("b-1", to: "gus", age: "6 days")
        #expect(try await firstNight(bundles: "com.hncs.szj,com.hncs.szj.lite").isEmpty)
        #expect(try await night(bundles: "com.hncs.szj,com.hncs.szj.lite").isEmpty)

        #expect(try await night().contains("foreign_bundle b-1 gus"))
        #expect(try await night().contains("foreign_bundle b-1 gus"), "an open item about an upload stays judged")
        #expect(try await night(bundles: "com.hncs.szj,com.hncs.szj.lite").isEmpty)
    }
}

/// Issue 23 with the App Store Server API, against the simulator: a backdated credit is asked of
/// Apple the night it is written, and a history fetched for one account is never an upload.
@Suite("Nightly runs equal one run over the whole history, with the Server API")
struct NightlyEqualsHistoryServerAPITests {
    static func run(_ settings: Settings, since: Date?, serverAPI: Bool) async throws -> Set<String> {
        let quiet = NightlyEqualsHistoryTests.quiet
        let report = try await AppleServices.withVerifierAndServerAPI(settings: settings, logger: quiet) {
            verifier, api in
            try await ReconciliationJob(
                settings: settings, verifier: verifier, serverAPI: serverAPI ? api : nil, logger: quiet
            ).run(.init(since: since))
        }
        return try NightlyEqualsHistoryTests.found(report)
    }

    /// A credit of a transaction Apple never issued, stored tonight with a delivered_at before the
    /// last run's window: the ledger's change is asked of Get Transaction Info by the next run
    /// (not found in either environment), which flags it.
    @Test func aBackdatedCreditOfATransactionAppleNeverIssuedIsFlaggedTheNextNight() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("api_backdated")
        try await sim.withRunning { running in
            let settings = try ServerAPIScenarioTests.settings(database: database, sim: sim, running: running, state: state)
            #expect(try await Self.run(settings, since: Date().addingTimeInterval(-86_400), serverAPI: true).isEmpty)
            try connection.plantDelivery("999000333", to: "mallory", product: "coin4886", age: "10 days")
            #expect(try await Self.run(settings, since: nil, serverAPI: true) == ["unverified_delivery 999000333 mallory"])
            let lookup = try connection.query(
                "SELECT result FROM reconcile.transaction_lookups WHERE transaction_id = '999000333'")
            #expect(try lookup.first?.decode(String.self, at: 0) == "not_found")
        }
    }

    /// Two app accounts on one Apple account (a family device): alice uploads P, bob uploads Q,
    /// both credited to the uploader. Each account's history lists both purchases; neither was
    /// uploaded by two accounts, so neither is a shared_receipt, with the Server API or without.
    /// When Q's username names alice, Q is a wrong_account, and nothing else.
    @Test(arguments: [true, false])
    func twoAppAccountsOnOneAppleAccount(serverAPI: Bool) async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("api_family_\(serverAPI)")
        func buy() throws -> CreatedTransaction {
            try sim.createTransaction(SimulatedTransaction(
                productId: "coin42", customer: "family", bundleId: "com.hncs.szj", environment: .production,
                type: .consumable, quantity: 1, purchaseDate: Date().addingTimeInterval(-86_400), price: 6000,
                currency: "CNY"))
        }
        let p = try buy()
        let q = try buy()
        for (user, transaction, username) in [("alice", p, nil), ("bob", q, "alice")] as [(String, CreatedTransaction, String?)] {
            try connection.plantSignedTransactionUpload(
                transaction.signedTransaction, claiming: transaction.transactionId, by: user, username: username,
                age: "20 hours")
            try connection.plantDelivery(transaction.transactionId, to: user, product: "coin42", age: "20 hours")
        }
        try await sim.withRunning { running in
            let settings = try ServerAPIScenarioTests.settings(database: database, sim: sim, running: running, state: state)
            let found = try await Self.run(settings, since: Date().addingTimeInterval(-3 * 86_400), serverAPI: serverAPI)
            #expect(found == ["wrong_account \(q.transactionId) alice"])
            if serverAPI {
                #expect(try connection.query(
                    "SELECT count(*) FROM reconcile.transaction_claims WHERE source = 'server_api'"
                )[0].decode(Int.self, at: 0) > 0, "the histories were fetched")
            }
        }
    }

    /// Alice uploads S from the family's Apple ID; her history is fetched. Later T is bought on the
    /// same Apple ID and never uploaded, and bob uploads U from it: his history lists S, U and T.
    /// Whose is T? Both app accounts use that Apple ID, so nobody's: T's credit to carol is no
    /// wrong_account, the night bob's history comes in as in a run over the whole history (which
    /// fetches both histories after T).
    @Test func aPurchaseListedByOneOfTwoAccountsHistoriesHasNoKnownBuyer() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("api_listing")
        func buy() throws -> CreatedTransaction {
            try sim.createTransaction(SimulatedTransaction(
                productId: "coin42", customer: "family", bundleId: "com.hncs.szj", environment: .production,
                type: .consumable, quantity: 1, purchaseDate: Date().addingTimeInterval(-86_400), price: 6000,
                currency: "CNY"))
        }
        func upload(_ user: String, _ transaction: CreatedTransaction) throws {
            try connection.plantSignedTransactionUpload(
                transaction.signedTransaction, claiming: transaction.transactionId, by: user, age: "10 minutes")
        }
        func credit(_ transaction: CreatedTransaction, to user: String) throws {
            try connection.plantDelivery(transaction.transactionId, to: user, product: "coin42", age: "10 minutes")
        }
        let s = try buy()
        try upload("alice", s)
        try credit(s, to: "alice")
        try await sim.withRunning { running in
            let settings = try ServerAPIScenarioTests.settings(database: database, sim: sim, running: running, state: state)
            #expect(try await Self.run(settings, since: Date().addingTimeInterval(-86_400), serverAPI: true).isEmpty)
            let t = try buy()
            let u = try buy()
            try upload("bob", u)
            try credit(u, to: "bob")
            try credit(t, to: "carol")
            #expect(try await Self.run(settings, since: nil, serverAPI: true).isEmpty)
            #expect(try connection.query(
                "SELECT count(DISTINCT user_id) FROM reconcile.transaction_claims WHERE transaction_id = $1",
                [t.transactionId])[0].decode(Int.self, at: 0) == 2, "both accounts list T")
        }
    }
}
