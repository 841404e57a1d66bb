import Foundation
import Logging
import Postgres
import Reconciliation
import TestSupport
import Testing

/// Issue 17 item 2: a nightly run carries over the open review items none of whose inputs
/// changed since the last finished run, unjudged — and that changes nothing anyone can see:
/// items, evidence, events and reports are those a full re-judge gives, and every input change
/// makes its items judged again.
@Suite("Nights with nothing new", .serialized)
struct QuietNightTests {
    let database: TestDatabase
    let reports: URL
    let connection: Connection

    /// Uploads of tx-1 … tx-5 (user-0 … user-4) and a forged one; tx-1 and tx-2 delivered, the
    /// others missed; a delivery of the forged one. tx-7, which Apple sent with an
    /// appAccountToken bound to user-7, is delivered to user-7 (clean), and tx-8, bound to user-8,
    /// is delivered to user-9 (wrong_account).
    init() throws {
        database = try TestDatabase.create("quiet_night")
        reports = Scratch.root.appendingPathComponent("reports-\(UUID().uuidString)")
        connection = try database.connect()
        _ = try Schema.migrate(connection)
        try ScriptedVerifier.upload(["tx-1", "tx-2", "tx-3", "tx-4", "tx-5", "forged-6"], on: connection)
        try connection.executeScript(
            """
            INSERT INTO reconcile.products (product_id, product_type, price_milli, currency)
            VALUES ('coin42', 'consumable', 6000, 'CNY');
            INSERT INTO reconcile.account_tokens (app_account_token, user_id)
            VALUES ('00000000-0000-4000-8000-000000000007', 'user-7'), ('00000000-0000-4000-8000-000000000008', 'user-8');
            INSERT INTO reconcile.runs (status, window_since, window_until, environment, started_at, finished_at)
            VALUES ('failed', now() - interval '3 days', now() - interval '3 days', 'production',
                    now() - interval '3 days', now() - interval '3 days');
            INSERT INTO reconcile.apple_transactions (transaction_id, original_transaction_id, product_id, product_type,
                bundle_id, environment, purchase_date, app_account_token, source, first_seen_run, last_seen_run)
            SELECT id, id, 'coin42', 'consumable', 'com.hncs.szj', 'Production', now() - interval '2 days', token::uuid,
                   'jws', (SELECT max(id) FROM reconcile.runs), (SELECT max(id) FROM reconcile.runs)
              FROM (VALUES ('tx-7', '00000000-0000-4000-8000-000000000007'),
                           ('tx-8', '00000000-0000-4000-8000-000000000008')) t(id, token);
            INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, delivered_at)
            VALUES ('tx-1', 'user-0', 'coin42', now() - interval '1 day'),
                   ('tx-2', 'user-1', 'coin42', now() - interval '1 day'),
                   ('forged-6', 'user-5', 'coin4886', now() - interval '1 day'),
                   ('tx-7', 'user-7', 'coin42', now() - interval '2 days'),
                   ('tx-8', 'user-9', 'coin42', now() - interval '2 days');
            """)
    }

    func settings() throws -> Settings {
        try Settings(lookup: [
            "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj", "RECONCILE_REPORT_DIR": reports.path,
        ].lookup)
    }

    func job(_ verifier: ScriptedVerifier) throws -> ReconciliationJob {
        ReconciliationJob(settings: try settings(), verifier: verifier, logger: Logger(label: "test"), batchSize: 2)
    }

    /// The first run: over the last week, every item judged.
    func firstRun(_ verifier: ScriptedVerifier) async throws -> RunReport {
        let report = try await job(verifier).run(.init(since: Date().addingTimeInterval(-7 * 86_400)))
        #expect(try findings(report) == [
            "missed_delivery tx-3", "missed_delivery tx-4", "missed_delivery tx-5", "unverified_delivery forged-6",
            "wrong_account tx-8",
        ])
        return report
    }

    func findings(_ report: RunReport) throws -> Set<String> {
        Set(try report.findings.map { "\($0.kind.rawValue) \($0.transactionID ?? "")" })
    }

    func newFindings(_ report: RunReport) throws -> Set<String> {
        Set(try report.findings.filter(\.isNew).map { "\($0.kind.rawValue) \($0.transactionID ?? "")" })
    }

    /// The open items as the queue holds them, with their evidence, and their events.
    func queue() throws -> (items: [String], events: [String]) {
        let items = try connection.query(
            """
            SELECT concat_ws(' | ', id, fingerprint, status, user_id, detected_user_id, amount_milli, currency,
                             purchase_date, first_seen_run, evidence::text)
              FROM reconcile.review_items ORDER BY id
            """
        ).map { try $0.decode(String.self, at: 0) }
        let events = try connection.query(
            "SELECT concat_ws(' | ', review_item_id, from_status, to_status, note) FROM reconcile.review_events ORDER BY id"
        ).map { try $0.decode(String.self, at: 0) }
        return (items, events)
    }

    /// What of a run's report files lists findings: report.json's findings, counts and value at
    /// risk, review.csv, and the findings sections of report.md and report.html (their headers
    /// name the run and its times).
    func listed(_ report: RunReport) throws -> [String] {
        let directory = URL(fileURLWithPath: try #require(report.reportDirectory))
        func text(_ name: String) throws -> String {
            try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        }
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("report.json")))
                as? [String: Any])
        let parts = try ["findings", "counts", "value_at_risk"].map { key in
            String(decoding: try JSONSerialization.data(withJSONObject: json[key] ?? NSNull(), options: [.sortedKeys]),
                   as: UTF8.self)
        }
        let markdown = try text("report.md")
        let html = try text("report.html")
        let markdownFindings = try #require(markdown.range(of: "\n## ", options: .backwards)).lowerBound
        let htmlFindings = try #require(html.range(of: "<table><thead>", options: .backwards)).lowerBound
        return parts + [try text("review.csv"), String(markdown[markdownFindings...]), String(html[htmlFindings...])]
    }

    /// What of the run's report files is not as a run rendering every row writes it
    /// (`ReportRowsCheck`): empty when every row kept from an earlier run still held.
    func rowsNotHolding(_ report: RunReport) throws -> [String] {
        try ReportRowsCheck.problems(report, reader: settings().reportReader, on: connection).problems
    }

    /// Makes the next run judge every open item, as before carrying items over existed: the
    /// last finished run's digest of what findings depend on no longer matches.
    func forgetJudgedInputs() throws {
        try connection.execute("UPDATE reconcile.runs SET judged_inputs = NULL")
    }

    /// The items whose evidence a run rewrote (a run that judges an open item refreshes it).
    func refreshed(since instant: Date) throws -> Int {
        try connection.query(
            "SELECT count(*) FROM reconcile.review_items WHERE updated_at >= $1", [instant]
        )[0].decode(Int.self, at: 0)
    }

    @Test func aNothingNewNightLeavesWhatAFullRejudgeWould() async throws {
        let verifier = ScriptedVerifier()
        let first = try await firstRun(verifier)
        let before = try queue()

        let started = Date()
        let quiet = try await job(verifier).run(.init())
        #expect(try refreshed(since: started) == 0, "nothing new: no item judged again")
        #expect(try queue().items == before.items && queue().events == before.events)
        #expect(try connection.query(
            "SELECT count(*) FROM reconcile.review_items WHERE status = 'open' AND last_seen_run = $1", [first.runID]
        )[0].decode(Int.self, at: 0) == 5, "carried-over items keep the last run that judged them")
        #expect(try findings(quiet) == findings(first) && newFindings(quiet).isEmpty)
        #expect(quiet.openFindings == 5 && quiet.newFindings == 0 && quiet.changes.autoResolved == 0)

        try forgetJudgedInputs()
        let rejudgedAt = Date()
        let full = try await job(verifier).run(.init())
        #expect(try refreshed(since: rejudgedAt) == 5, "the forced run judged every open item")
        #expect(try queue().items == before.items && queue().events == before.events)
        #expect(try listed(quiet) == listed(full))
        #expect(quiet.valueAtRisk == full.valueAtRisk && quiet.counts == full.counts)

        // And the run after a full one carries items over again.
        let again = try await job(verifier).run(.init())
        #expect(try listed(again) == listed(full))
        #expect(verifier.calls.count == 6)
    }

    /// A carried item's rows are written as the run that judged it rendered them
    /// (`reconcile.report_rows`), and only while they hold: an item judged again is written from
    /// them when its inputs are those they were rendered from (migration 0024), and rendered again
    /// when they changed or for another reader.
    @Test func aCarriedItemIsWrittenFromTheRowsKeptForIt() async throws {
        let verifier = ScriptedVerifier()
        let first = try await firstRun(verifier)
        #expect(try connection.query(
            "SELECT count(*) FROM reconcile.report_rows WHERE judged_run = $1 AND inputs IS NOT NULL", [first.runID]
        )[0].decode(Int.self, at: 0) == 5, "the first run keeps its five items' rows, with their inputs")
        // Marked, so that a report written from them shows it.
        func mark() throws {
            try connection.execute(
                """
                UPDATE reconcile.report_rows
                   SET html = replace(html, '</tr>', '<!--kept--></tr>'), markdown = markdown || '<!--kept-->'
                 WHERE html NOT LIKE '%<!--kept-->%'
                """)
        }
        try mark()
        func kept(_ report: RunReport) throws -> (html: Int, markdown: Int) {
            let directory = URL(fileURLWithPath: try #require(report.reportDirectory))
            func count(_ name: String) throws -> Int {
                try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
                    .components(separatedBy: "<!--kept-->").count - 1
            }
            return (try count("report.html"), try count("report.md"))
        }
        let quiet = try await job(verifier).run(.init())
        #expect(try kept(quiet) == (5, 5))

        // Judged again (the judged inputs changed), every item as it was: written from its rows.
        try forgetJudgedInputs()
        let started = Date()
        let rejudged = try await job(verifier).run(.init())
        #expect(try refreshed(since: started) == 5)
        #expect(try kept(rejudged) == (5, 5))

        // tx-8's delivery edited: its item is judged again with other evidence and rendered again;
        // the other four are carried over and written from their rows, which the run before
        // stamped with its own number when it found their inputs as they were.
        try connection.execute(
            """
            UPDATE reconcile.deliveries SET delivered_at = delivered_at - interval '1 hour'
             WHERE transaction_id = 'tx-8'
            """)
        let edited = try await job(verifier).run(.init())
        #expect(try kept(edited) == (4, 4))
        try mark()
        let after = try await job(verifier).run(.init())
        #expect(try kept(after) == (5, 5))

        // Another language: rendered again, and kept for it.
        let chinese = try Settings(lookup: [
            "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj", "RECONCILE_REPORT_DIR": reports.path,
            "RECONCILE_LANGUAGE": "zh-Hans",
        ].lookup)
        let other = try await ReconciliationJob(settings: chinese, verifier: verifier, logger: Logger(label: "test"))
            .run(.init())
        #expect(try kept(other) == (0, 0))
        let english = try await job(verifier).run(.init())
        #expect(try kept(english) == (0, 0))
    }

    /// Without the ledger's change triggers an edit in place leaves no trace: every night judges
    /// every open item, as before.
    @Test func aLedgerWithoutChangeTriggersIsJudgedWholeEveryNight() async throws {
        let verifier = ScriptedVerifier()
        _ = try await firstRun(verifier)
        try connection.execute("DROP TRIGGER deliveries_note_updates ON reconcile.deliveries")
        let started = Date()
        _ = try await job(verifier).run(.init())
        #expect(try refreshed(since: started) == 5)
        #expect(try connection.query(
            "SELECT count(*) FROM reconcile.runs WHERE judged_inputs IS NULL AND id = (SELECT max(id) FROM reconcile.runs)"
        )[0].decode(Int.self, at: 0) == 1)
    }

    @Test func everyInputChangeIsJudgedAgain() async throws {
        let verifier = ScriptedVerifier()
        _ = try await firstRun(verifier)

        // A token bound again: tx-7's buyer is now user-8, its delivery went to user-7; tx-8's
        // token is unbound, its buyer unknown (no upload), its wrong_account gone.
        try connection.executeScript(
            """
            UPDATE reconcile.account_tokens SET user_id = 'user-8' WHERE app_account_token = '00000000-0000-4000-8000-000000000007';
            DELETE FROM reconcile.account_tokens WHERE app_account_token = '00000000-0000-4000-8000-000000000008';
            """)
        let rebound = try await job(verifier).run(.init())
        #expect(try rowsNotHolding(rebound).isEmpty)
        #expect(try newFindings(rebound) == ["wrong_account tx-7"])
        #expect(try !findings(rebound).contains("wrong_account tx-8") && rebound.changes.autoResolved == 1)
        #expect(try connection.query("SELECT count(*) FROM reconcile.token_changes")[0].decode(Int.self, at: 0) == 0,
                "a finished run prunes the token changes it judged")

        // The catalogue's price changes: every item is judged again, amounts follow (Apple's
        // record of tx-7 names no price: the catalogue's counts).
        try connection.execute("UPDATE reconcile.products SET price_milli = 8000 WHERE product_id = 'coin42'")
        let repriced = try await job(verifier).run(.init())
        #expect(try rowsNotHolding(repriced).isEmpty, "amounts follow the catalogue, the evidence as it was")
        #expect(try connection.query(
            "SELECT amount_milli FROM reconcile.review_items WHERE kind = 'wrong_account' AND transaction_id = 'tx-7'"
        )[0].decode(Int64?.self, at: 0) == 8000)
        #expect(repriced.valueAtRisk.contains { $0.kind == .wrongAccount && $0.amountMilli == 8000 })

        // A ledger row edited in place, a day old: tx-2 now credits two coins for one bought.
        try connection.execute("UPDATE reconcile.deliveries SET quantity = 2 WHERE transaction_id = 'tx-2'")
        let edited = try await job(verifier).run(.init())
        #expect(try newFindings(edited) == ["quantity_mismatch tx-2"])
        #expect(try rowsNotHolding(edited).isEmpty)

        // A new claim: user-6 uploads tx-3 too (shared_receipt; tx-3's buyer is no longer known).
        try connection.plantSignedTransactionUpload("tx-3", claiming: "tx-3", by: "user-6", age: "10 minutes")
        let claimed = try await job(verifier).run(.init())
        #expect(try rowsNotHolding(claimed).isEmpty)
        #expect(try newFindings(claimed) == ["shared_receipt tx-3"])
        let evidence = try connection.query(
            "SELECT evidence FROM reconcile.review_items WHERE fingerprint = 'missed_delivery:tx-3'"
        )[0].decode(String.self, at: 0)
        #expect(evidence.contains("user-6"), "the missed delivery's evidence shows the new upload")

        // A refund notification: Apple's newer word on tx-1, applied by the run.
        try connection.execute("INSERT INTO reconcile.notifications (signed_payload) VALUES ('refund of tx-1')")
        let refund = NotificationApplier { _ in
            .verified(
                uuid: UUID(), type: .refund, subtype: nil, signedDate: Date(),
                transaction: AppleTransactionRecord(
                    transactionID: "tx-1", originalTransactionID: "tx-1", productID: "coin42", productType: "consumable",
                    bundleID: "com.hncs.szj", environment: .production,
                    purchaseDate: Date().addingTimeInterval(-86_400), revocationDate: Date().addingTimeInterval(-3600),
                    revocationReason: 0, priceMilli: 6000, currency: "CNY", signedDate: Date(), source: "notification"))
        }
        let refunded = try await ReconciliationJob(
            settings: try settings(), verifier: verifier, notifications: refund, logger: Logger(label: "test")
        ).run(.init())
        #expect(try newFindings(refunded) == ["refunded_delivery tx-1"])
        #expect(try rowsNotHolding(refunded).isEmpty)

        // And a night with nothing new lists what the last one did.
        let quiet = try await job(verifier).run(.init())
        #expect(try findings(quiet) == findings(refunded) && newFindings(quiet).isEmpty)
        try forgetJudgedInputs()
        let full = try await job(verifier).run(.init())
        #expect(try listed(quiet) == listed(full))
        #expect(try rowsNotHolding(quiet).isEmpty && rowsNotHolding(full).isEmpty)
        #expect(verifier.calls.count == 7)
    }

    /// An open item whose binding names an account nobody knew is judged again the night that
    /// account first uploads: tx-9's upload (user-10) says its applicationUsername is user-z, so
    /// once user-z has uploaded, user-z is the buyer the missed delivery is owed to.
    @Test func anAccountABindingNamesIsJudgedOnceItUploads() async throws {
        let verifier = ScriptedVerifier()
        _ = try await firstRun(verifier)
        func upload(_ user: String, _ transaction: String, username: String?) throws {
            try connection.plantSignedTransactionUpload(
                transaction, claiming: transaction, by: user, username: username, age: "10 minutes")
        }
        /// The account the missed delivery is owed to, as last detected.
        func owedTo() throws -> String? {
            try connection.query(
                "SELECT detected_user_id FROM reconcile.review_items WHERE fingerprint = 'missed_delivery:tx-9'"
            ).first?.decode(String?.self, at: 0)
        }
        try upload("user-10", "tx-9", username: "user-z")
        let unknown = try await job(verifier).run(.init())
        #expect(try newFindings(unknown) == ["missed_delivery tx-9"])
        #expect(try owedTo() == "user-10", "nobody is named user-z yet: the uploader is the buyer")

        // user-z uploads another purchase, credited to them: nothing new about tx-9 but its buyer.
        try upload("user-z", "tx-10", username: nil)
        try connection.plantDelivery("tx-10", to: "user-z", product: "coin42", age: "5 minutes")
        let named = try await job(verifier).run(.init())
        #expect(try owedTo() == "user-z")
        #expect(try findings(named).contains("missed_delivery tx-9") && newFindings(named).isEmpty)
        let carried = try queue()
        try forgetJudgedInputs()
        _ = try await job(verifier).run(.init())
        #expect(try queue().items == carried.items, "a full re-judge agrees with the carrying night")
    }
}
