import AppStore
import AppStoreSimulator
import Foundation
import Postgres
import Reconciliation
import TestSupport
import Testing

/// The real `reconcile` binary: lookup's exit codes and JSON, `run` as the default subcommand,
/// the outbox commands, and `inspect` of something that does not verify (SPEC sections 7, 13).
@Suite("Support desk: the reconcile command line")
struct DeskCommandLineTests {
    static func reconcile(
        _ arguments: [String], environment: [String: String], label: String
    ) async throws -> (status: Int32, out: String, err: String) {
        let logs = Scratch.root.appendingPathComponent("desk-cli-\(UUID().uuidString)")
        let child = try ChildProcess(
            try ChildProcess.executable("reconcile"), arguments: arguments + ["--log-level", "error"],
            environment: environment, logDirectory: logs, label: label)
        let status = try await child.waitForExit()
        return (status, child.standardOutput, child.standardError)
    }

    /// Issue 24 item 10: what clients wrote (an upload's kind, here with terminal escapes that
    /// would retitle the window and clear the screen) reaches the terminal made safe.
    @Test func lookupPrintsClientTextTerminalSafe() async throws {
        let (database, connection) = try TestDatabase.migrated("desk_cli_escapes")
        try connection.execute(
            """
            INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at)
            VALUES ('u-esc', $1, 'x', '7100000001', now() - interval '2 days')
            """, ["\u{1B}]0;owned\u{07}\u{1B}[2J\u{9B}31m"])
        try connection.plantDelivery("7100000001", to: "u-esc", product: "coin42", age: "2 days")
        let result = try await Self.reconcile(
            ["lookup", "--user", "u-esc"],
            environment: ["DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.example.game"], label: "escapes")
        #expect(result.out.contains("Uploads:"), "\(result.out) \(result.err)")
        let controls = result.out.unicodeScalars.filter { $0.properties.generalCategory == .control && $0 != "\n" }
        #expect(controls.isEmpty, "\(controls.map(\.value))")
    }

    /// Issue 24 item 13: `reconcile check` tests the outbox webhook, within a deadline for the
    /// whole answer (here a webhook that trickles its body).
    @Test func checkTestsTheWebhook() async throws {
        let database = try TestDatabase.create("check_webhook")
        _ = try Schema.migrate(try database.connect())
        let hook = try TricklingHTTPServer(body: .chunkedForever)
        defer { hook.stop() }
        let result = try await Self.reconcile(
            ["check"],
            environment: [
                "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.example.game",
                "RECONCILE_RECEIPT_VERIFICATION": "local",
                "RECONCILE_OUTBOX_WEBHOOK_URL": "http://127.0.0.1:\(hook.port)/hook",
                "RECONCILE_OUTBOX_WEBHOOK_SECRET": "a-secret-of-enough-length",
            ], label: "check")
        #expect(result.status == 1)
        #expect(result.out.contains("FAIL outbox webhook: http://127.0.0.1:\(hook.port)/hook gave no complete answer"),
                "\(result.out)")
    }

    @Test func lookupExitCodesAndJSON() async throws {
        let (database, connection, sim, state) = try ServerAPIScenarioTests.world("desk_cli_lookup")
        let missed = try DeskTests.buy(sim, customer: "dan", order: "MKCLI00001")
        try await sim.withRunning { running in
            let local: [String: String] = [
                "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
                "APPLE_ROOT_CERTIFICATES": state.appendingPathComponent(SimulatorCA.FileName.rootCertificate).path,
            ]
            let api = local.merging(running.jobEnvironment) { $1 }

            let noCredentials = try await Self.reconcile(["lookup", "MKCLI00001"], environment: local, label: "nocreds")
            #expect(noCredentials.status == 64, "\(noCredentials.err)")
            #expect(noCredentials.err.contains("Server API credentials"))

            let bad = try await Self.reconcile(["lookup", "--transaction", "12x"], environment: local, label: "bad")
            #expect(bad.status == 64)

            let nothing = try await Self.reconcile(["lookup", "--user", "nobody"], environment: local, label: "nothing")
            #expect(nothing.status == 1)
            #expect(nothing.out.contains("Nothing found"))

            let invalid = try await Self.reconcile(["lookup", "MKNOSUCH01"], environment: api, label: "invalid")
            #expect(invalid.status == 1)
            #expect(invalid.out.contains("not an order ID of this app"))

            let found = try await Self.reconcile(["lookup", "MKCLI00001", "--json"], environment: api, label: "found")
            #expect(found.status == 2, "a missed delivery is a finding: \(found.err)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(found.out.utf8)) as? [String: Any])
            #expect((object["order"] as? [String: Any])?["status"] as? String == "valid")
            let transactions = try #require(object["transactions"] as? [[String: Any]])
            #expect(transactions.map { $0["transaction_id"] as? String } == [missed.transactionId])
            #expect(transactions.first?["verdict"] as? String == "missed_delivery")
            let keys = Set(transactions.first.map { Array($0.keys) } ?? [])
            #expect(keys.isSuperset(of: [
                "transaction_id", "original_transaction_id", "product_id", "purchase_date", "quantity", "environment",
                "revocation_date", "revocation_type", "revocation_percentage", "sources", "buyer", "deliveries",
                "uploads", "review_items", "verdict",
            ]))

            let byTransaction = try await Self.reconcile(
                ["lookup", "--transaction", missed.transactionId, "--json"], environment: local, label: "tx")
            let picture = try #require(
                try JSONSerialization.jsonObject(with: Data(byTransaction.out.utf8)) as? [String: Any])
            #expect(picture["order"] is NSNull, "order is null, not absent, for lookups that are not by order")

            let human = try await Self.reconcile(["lookup", "MKCLI00001", "--enqueue"], environment: api, label: "human")
            #expect(human.status == 2)
            #expect(human.out.contains("missed_delivery: Apple confirms the purchase"))
            #expect(try connection.query("SELECT 1 FROM reconcile.review_items").count == 1)
        }
    }

    /// `reconcile --since 36h` is `reconcile run --since 36h`.
    @Test func runIsTheDefaultSubcommand() async throws {
        let (database, connection) = try TestDatabase.migrated("desk_cli_default")
        let reports = Scratch.root.appendingPathComponent("desk-cli-\(UUID().uuidString)")
        let result = try await Self.reconcile(
            ["--since", "36h"],
            environment: [
                "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
                "RECONCILE_RECEIPT_VERIFICATION": "local", "RECONCILE_REPORT_DIR": reports.path,
            ], label: "default")
        #expect(result.status == 0, "\(result.err)")
        let runs = try connection.query("SELECT status, window_since IS NOT NULL FROM reconcile.runs")
        #expect(runs.count == 1)
        #expect(try runs.first?.decode(String.self, at: 0) == "completed")
        #expect(try runs.first?.decode(Bool.self, at: 1) == true)
    }

    @Test func outboxListAndAckThroughTheCommandLine() async throws {
        let (database, connection) = try OutboxTests.world("desk_cli_outbox")
        let environment = ["DATABASE_URL": database.url, "RECONCILE_ACTOR": "fulfilment"]
        let listed = try await Self.reconcile(["outbox", "list", "--json"], environment: environment, label: "list")
        #expect(listed.status == 0, "\(listed.err)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(listed.out.utf8)) as? [[String: Any]])
        #expect(rows.map { $0["action"] as? String } == ["grant", "revoke", "move"])
        #expect(rows.allSatisfy { $0["consumed_at"] is NSNull && $0["delivered_at"] is NSNull })
        let first = try #require(rows.first?["id"] as? Int)
        let acked = try await Self.reconcile(["outbox", "ack", String(first)], environment: environment, label: "ack")
        #expect(acked.status == 0, "\(acked.err)")
        let consumedBy = try connection.query(
            "SELECT consumed_by FROM reconcile.action_outbox WHERE id = $1", [Int64(first)])
        #expect(try consumedBy.first?.decode(String?.self, at: 0) == "fulfilment", "--by defaults to RECONCILE_ACTOR")
        let pending = try await Self.reconcile(
            ["outbox", "list", "--pending", "--json"], environment: environment, label: "pending")
        let left = try #require(try JSONSerialization.jsonObject(with: Data(pending.out.utf8)) as? [[String: Any]])
        #expect(left.count == 2)
    }

    /// A JWS whose signature is broken still shows its payload, marked untrusted, and exits 1.
    @Test func inspectShowsWhatAForgedJWSDecodesToMarkedUntrusted() async throws {
        let (_, _, sim, state) = try ServerAPIScenarioTests.world("desk_cli_inspect")
        let bought = try DeskTests.buy(sim, customer: "eve")
        var parts = bought.signedTransaction.split(separator: ".").map(String.init)
        parts[2] = String(parts[2].reversed())
        let file = state.appendingPathComponent("forged.jws")
        try parts.joined(separator: ".").write(to: file, atomically: true, encoding: .utf8)
        let environment = [
            "APPLE_ROOT_CERTIFICATES": state.appendingPathComponent(SimulatorCA.FileName.rootCertificate).path,
        ]
        let json = try await Self.reconcile(["inspect", file.path, "--json"], environment: environment, label: "json")
        #expect(json.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        #expect(object["trusted"] as? Bool == false)
        #expect((object["reason"] as? String)?.isEmpty == false)
        #expect((object["decoded"] as? [String: Any])?["transactionId"] as? String == bought.transactionId)
        let text = try await Self.reconcile(["inspect", file.path], environment: environment, label: "text")
        #expect(text.status == 1)
        #expect(text.out.contains("UNTRUSTED"))
        #expect(text.out.contains(bought.transactionId))
    }

    /// Issue 25 item 6: an untrusted receipt (Xcode's StoreKit certificate is no Apple root) shows
    /// everything the receipt holds, through the one decoding every receipt has: a
    /// subscription's expiry and offer flag too, not a second, shorter list of fields.
    @Test func inspectShowsAnUntrustedReceiptsSubscriptionFields() async throws {
        // Apple's app-store-server-library test resource (Tests/AppStoreTests/Vectors/MANIFEST.md).
        let receipt = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "AppStoreTests/Vectors/receipts/xcode-app-receipt-with-transaction.b64")
        let json = try await Self.reconcile(
            ["inspect", receipt.path, "--offline", "--json"], environment: [:], label: "xcode-receipt")
        #expect(json.status == 1, "an Xcode receipt is not trusted")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        #expect(object["trusted"] as? Bool == false)
        let decoded = try #require(object["decoded"] as? [String: Any])
        #expect(decoded["receipt_type"] as? String == "Xcode")
        let purchase = try #require((decoded["in_app"] as? [[String: Any]])?.first)
        #expect(purchase["product_id"] as? String == "pass.premium")
        #expect(purchase["expires_date"] as? String == "2023-11-19T01:45:36Z")
        #expect(purchase["is_in_intro_offer_period"] as? Bool == true)
    }
}
