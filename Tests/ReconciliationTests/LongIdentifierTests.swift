import AppStore
import AppStoreSimulator
import Foundation
import Postgres
import Reconciliation
import TestSupport
import Testing

/// Issue 14, item 6: identifiers longer than a btree index entry allows (PostgreSQL refuses
/// entries over about 2,700 bytes) — kilobytes of incompressible text in a ledger or upload
/// field — never stop a run or the queue. Among ordinary rows, an account id, a transaction id
/// and a product id of 8,000 random base64 characters each: the app can store them, the run
/// completes with the ordinary findings and the hostile rows' own, carrying the long values byte
/// for byte into the queue, the evidence, report.json and review.csv; a second run creates no
/// second item; the item is decided and its outbox row written; the desk looks the account up.
@Suite("Identifiers longer than an index entry")
struct LongIdentifierTests {
    /// 8,000 characters of base64 of random bytes (pglz cannot shrink it under the limit),
    /// after a prefix that keeps a spreadsheet from reading it as a formula.
    static func incompressible(_ prefix: String) -> String {
        var generator = SystemRandomNumberGenerator()
        return prefix + Data((0..<6_000).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64EncodedString()
    }

    @Test func longIdentifiersAreJudgedLikeAnyOther() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("long_ids")
        let longUser = Self.incompressible("user-")
        let longTransaction = Self.incompressible("tx-")
        let longClaimed = Self.incompressible("claimed-")
        let longProduct = Self.incompressible("product-")
        let dayAgo = Date().addingTimeInterval(-86_400)
        func receipt(_ id: String) throws -> String {
            try sim.issueReceipt(SimulatedReceipt(
                bundleID: "com.hncs.szj", environment: .production,
                purchases: [.init(productID: "coin42", transactionID: id, purchaseDate: dayAgo)])).receiptData
        }

        // What the app writes: ordinary rows and the hostile ones, into the reference tables.
        let uploads: [(user: String, payload: String, claimed: String?)] = [
            ("plain-receipt", try receipt("9001"), nil),
            ("plain-delivered", try receipt("9002"), nil),
            (longUser, try receipt("9003"), nil),
            ("plain-claims-long", "MIIT!!not*base64", longClaimed),
        ]
        for upload in uploads {
            try connection.execute(
                """
                INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at)
                VALUES ($1, 'app_receipt', $2, $3, now() - interval '20 hours')
                """, [upload.user, upload.payload, upload.claimed])
        }
        let deliveries: [(transaction: String, user: String, product: String)] = [
            ("9002", "plain-delivered", "coin42"),
            ("8001", "plain-unknown", "coin42"),
            ("8002", longUser, "coin42"),
            (longTransaction, "plain-long-transaction", "coin42"),
            ("8003", "plain-long-product", longProduct),
        ]
        for delivery in deliveries {
            try connection.plantDelivery(
                delivery.transaction, to: delivery.user, product: delivery.product, age: "20 hours")
        }

        let since = Date().addingTimeInterval(-3 * 86_400)
        let (first, second, settings) = try await sim.withRunning { running in
            let settings = try ServerAPIScenarioTests.settings(database: database, sim: sim, running: running, state: state)
            let first = try await ServerAPIScenarioTests.run(settings, since: since)
            let second = try await ServerAPIScenarioTests.run(settings, since: since)
            return (first, second, settings)
        }

        #expect(first.status == "completed")
        let expected: Set<String> = [
            "missed_delivery 9001 plain-receipt -",
            "missed_delivery 9003 \(longUser) -",
            "unverified_delivery 8001 plain-unknown coin42",
            "unverified_delivery 8002 \(longUser) coin42",
            "unverified_delivery \(longTransaction) plain-long-transaction coin42",
            "unverified_delivery 8003 plain-long-product \(longProduct)",
        ]
        func summary(_ finding: RunReport.Finding) -> String {
            let product = finding.kind == .unverifiedDelivery ? finding.productID ?? "nil" : "-"
            return "\(finding.kind.rawValue) \(finding.transactionID ?? "nil") \(finding.userID ?? "nil") \(product)"
        }
        let firstFindings = try first.findings
        #expect(Set(firstFindings.map(summary)) == expected)
        #expect(firstFindings.count == expected.count)

        // The queue holds the long values byte for byte, in its columns and the evidence.
        let items = try connection.query(
            "SELECT id, kind, transaction_id, user_id, product_id, evidence::text FROM reconcile.review_items ORDER BY id")
        #expect(items.count == expected.count)
        var itemOfLongUser: Int64?
        var sawLongTransaction = false
        var sawLongProduct = false
        for row in items {
            let (kind, transaction) = (try row.decode(String.self, "kind"), try row.decode(String?.self, "transaction_id"))
            let (user, product) = (try row.decode(String?.self, "user_id"), try row.decode(String?.self, "product_id"))
            let evidence = try JSONSerialization.jsonObject(with: Data(try row.decode(String.self, "evidence").utf8))
            let ledger = ((evidence as? [String: Any])?["deliveries"] as? [[String: Any]]) ?? []
            if kind == "unverified_delivery" && user == longUser {
                itemOfLongUser = try row.decode(Int64.self, "id")
                #expect(ledger.map { $0["user_id"] as? String } == [longUser])
            }
            if transaction == longTransaction {
                sawLongTransaction = true
                #expect(ledger.map { $0["transaction_id"] as? String } == [longTransaction])
            }
            if product == longProduct {
                sawLongProduct = true
                #expect(ledger.map { $0["product_id"] as? String } == [longProduct])
            }
        }
        #expect(sawLongTransaction && sawLongProduct)
        // Apple was asked about the long transaction id and its answer recorded under it.
        let asked = try connection.query(
            "SELECT result FROM reconcile.transaction_lookups WHERE transaction_id = $1", [longTransaction])
        #expect(try asked.map { try $0.decode(String.self, "result") } == ["not_found"])
        let itemID = try #require(itemOfLongUser)

        // The report's files carry them too.
        let folder = URL(fileURLWithPath: settings.reportDirectory)
            .appendingPathComponent("run-\(first.runID)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("report.json")))
                as? [String: Any])
        let reported = try #require(json["findings"] as? [[String: Any]])
        #expect(Set(reported.compactMap { $0["user_id"] as? String }).contains(longUser))
        #expect(Set(reported.compactMap { $0["transaction_id"] as? String }).contains(longTransaction))
        #expect(Set(reported.compactMap { $0["product_id"] as? String }).contains(longProduct))
        let csv = try String(contentsOf: folder.appendingPathComponent("review.csv"), encoding: .utf8)
        #expect(csv.components(separatedBy: "\r\n").filter { $0.contains(",\(longUser),") }.count == 2)
        #expect(csv.contains(",\(longTransaction),"))
        #expect(csv.contains(",\(longProduct),"))

        // A second run finds the same and makes no second item.
        #expect(second.status == "completed")
        #expect(Set(try second.findings.map(summary)) == expected)
        #expect(try connection.query("SELECT 1 FROM reconcile.review_items").count == expected.count)
        #expect(try connection.query("SELECT 1 FROM reconcile.review_items WHERE first_seen_run <> $1",
                                     [first.runID]).isEmpty)

        // Decided at the command line: the outbox row names the long account.
        let local = ["DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj"]
        let decided = try await DeskCommandLineTests.reconcile(
            ["review", "resolve", String(itemID), "--resolution", "revoked", "--by", "sue", "--note", "never bought"],
            environment: local, label: "long-resolve")
        #expect(decided.status == 0, "\(decided.err)")
        let outbox = try connection.query(
            "SELECT action, transaction_id, from_user_id FROM reconcile.action_outbox WHERE review_item_id = $1", [itemID])
        #expect(outbox.count == 1)
        #expect(try outbox.first?.decode(String.self, "action") == "revoke")
        #expect(try outbox.first?.decode(String?.self, "transaction_id") == "8002")
        #expect(try outbox.first?.decode(String?.self, "from_user_id") == longUser)

        // The desk looks the account up by its long id.
        let lookup = try await DeskCommandLineTests.reconcile(
            ["lookup", "--user", longUser, "--json"], environment: local, label: "long-lookup")
        #expect(lookup.status == 2, "findings are the exit status 2: \(lookup.err)")
        let picture = try #require(try JSONSerialization.jsonObject(with: Data(lookup.out.utf8)) as? [String: Any])
        let transactions = try #require(picture["transactions"] as? [[String: Any]])
        #expect(Set(transactions.compactMap { $0["transaction_id"] as? String }) == ["8002", "9003"])
    }

    /// Migration 0010 on a database with items and lookups made before it: each item stays the
    /// same item (its fingerprint finds it, a second one is refused), and the digest is SHA-256
    /// of the text's UTF-8 bytes whatever the text holds.
    @Test func itemsMadeBeforeTheMigrationKeepTheirIdentity() throws {
        let database = try TestDatabase.create("migration_0010")
        let connection = try database.connect()
        _ = try Migrator(schema: Schema.name, lockKey: Schema.LockKey.migrate)
            .apply(try Schema.migrations().filter { $0.version < 10 }, on: connection)
        try connection.execute("INSERT INTO reconcile.runs (window_until, environment) VALUES (now(), 'production')")
        try connection.execute(
            """
            INSERT INTO reconcile.review_items
                (fingerprint, kind, severity, status, transaction_id, user_id, suggested_action, first_seen_run,
                 last_seen_run, resolution, resolved_by)
            VALUES ('missed_delivery:t1', 'missed_delivery', 'high', 'open', 't1', 'u1', 'grant', 1, 1, NULL, NULL),
                   ('unverified_delivery:t2:' || md5('u2'), 'unverified_delivery', 'medium', 'resolved', 't2', 'u2',
                    'revoke', 1, 1, 'revoked', 'sue')
            """)
        try connection.execute(
            "INSERT INTO reconcile.transaction_lookups (transaction_id, result) VALUES ('t2', 'not_found')")
        let before = try connection.query("SELECT id, fingerprint FROM reconcile.review_items ORDER BY id")
            .map { "\(try $0.decode(Int64.self, "id")) \(try $0.decode(String.self, "fingerprint"))" }

        _ = try Schema.migrate(connection)

        try connection.execute("INSERT INTO reconcile.runs (window_until, environment) VALUES (now(), 'production')")
        // The queue's upsert (sql/diff/81_queue_upsert.sql) meets the items made before.
        let upserted = try connection.query(
            """
            INSERT INTO reconcile.review_items AS r
                (fingerprint, kind, severity, transaction_id, user_id, suggested_action, first_seen_run, last_seen_run)
            VALUES ('missed_delivery:t1', 'missed_delivery', 'high', 't1', 'u1', 'grant', 2, 2),
                   ('unverified_delivery:t2:' || md5('u2'), 'unverified_delivery', 'medium', 't2', 'u2', 'revoke', 2, 2)
            ON CONFLICT ((reconcile.text_digest(fingerprint))) DO UPDATE SET last_seen_run = EXCLUDED.last_seen_run
            RETURNING r.id, r.fingerprint, (xmax = 0) AS inserted
            """)
        #expect(try upserted.map { "\(try $0.decode(Int64.self, "id")) \(try $0.decode(String.self, "fingerprint"))" }
            == before)
        #expect(try upserted.allSatisfy { try !$0.decode(Bool.self, "inserted") })
        #expect(throws: (any Error).self) {
            try connection.execute(
                """
                INSERT INTO reconcile.review_items
                    (fingerprint, kind, severity, transaction_id, suggested_action, first_seen_run, last_seen_run)
                VALUES ('missed_delivery:t1', 'missed_delivery', 'high', 't1', 'grant', 2, 2)
                """)
        }
        #expect(throws: (any Error).self) {
            try connection.execute(
                "INSERT INTO reconcile.transaction_lookups (transaction_id, result) VALUES ('t2', 'retry')")
        }

        // Backslashes, a bytea escape, an octal escape, non-ASCII text and 8,000 random characters.
        let texts = [#"a\b"#, #"\xdeadbeef"#, #"\\x41\101"#, "账户-é-🎮", Self.incompressible("x")]
        for text in texts {
            let same = try connection.query(
                "SELECT reconcile.text_digest($1) = sha256(convert_to($1, 'UTF8')) AS same", [text])
            #expect(try same.first?.decode(Bool.self, "same") == true, "\(text.prefix(20))")
        }
    }
}
