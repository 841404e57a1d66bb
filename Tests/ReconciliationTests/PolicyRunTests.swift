import Foundation
import Logging
import Postgres
import Reconciliation
import TestSupport
import Testing

/// Policies where they run: after `reconcile run` (its report says what each rule decided, in both
/// languages), and through the command line: `policy check`, `policy preview`, and a run given a
/// file that does not load.
@Suite("Policies in a run and on the command line", .serialized)
struct PolicyRunTests {
    let database: TestDatabase
    let reports: URL
    let folder: URL

    /// Three purchases Apple confirms by their uploaded JWS that the app never credited, 6.00 CNY
    /// each, and one it credited.
    init() throws {
        database = try TestDatabase.create("policy_run")
        folder = Scratch.root.appendingPathComponent("policy-\(UUID().uuidString)")
        reports = folder.appendingPathComponent("reports")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let connection = try database.connect()
        _ = try Schema.migrate(connection)
        try ScriptedVerifier.upload(["tx-1", "tx-2", "tx-3", "tx-4"], on: connection)
        try connection.plantDelivery("tx-1", to: "user-0", product: "coin42", age: "1 day")
    }

    /// Grants what a JWS upload confirmed, two a run.
    static let policy = """
        rules:
          - name: jws-small-pack
            when:
              kind: [missed_delivery]
              max_amount: {CNY: 6}
              sources: [jws]
              buyer_basis: [uploader]
            limits:
              per_run: {items: 2}
            decide: granted
            note: confirmed by the customer's signed transaction
        """

    func write(_ text: String, _ name: String) throws -> String {
        let url = folder.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    func settings(_ extra: [String: String]) throws -> Settings {
        try Settings(lookup: ([
            "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj", "RECONCILE_REPORT_DIR": reports.path,
        ].merging(extra) { $1 }).lookup)
    }

    @Test func aRunAppliesItsPoliciesAndReportsThemByRule() async throws {
        let path = try write(Self.policy, "policy.yaml")
        let job = ReconciliationJob(
            settings: try settings(["RECONCILE_POLICY_FILE": path, "RECONCILE_LANGUAGE": "zh-Hans"]),
            verifier: ScriptedVerifier(), logger: Logger(label: "test"))
        let report = try await job.run(.init(since: Date().addingTimeInterval(-7 * 86_400)))
        #expect(report.policies == [
            PolicyTally(rule: "jws-small-pack", decided: 2, amounts: [Money(milli: 12_000, currency: "CNY")]),
        ])
        let folder = reports.appendingPathComponent("run-\(report.runID)")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("report.json")))
            as! [String: Any]
        let policies = try #require(json["policies"] as? [String: [String: Any]])
        #expect(policies.count == 1 && policies["jws-small-pack"]?["decided"] as? Int == 2)
        #expect((policies["jws-small-pack"]?["amount"] as? [String: Double]) == ["CNY": 12])
        let markdown = try String(contentsOf: folder.appendingPathComponent("report.md"), encoding: .utf8)
        #expect(markdown.contains("## 策略自动处理") && markdown.contains("| jws-small-pack | 2 | ¥12.00 |"), "\(markdown)")
        let html = try String(contentsOf: folder.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(html.contains("<h2>策略自动处理</h2>") && html.contains("<code>jws-small-pack</code>"))

        // The next run decides the third (a new run's limit), and reports only what it decided.
        let english = ReconciliationJob(
            settings: try settings(["RECONCILE_POLICY_FILE": path]), verifier: ScriptedVerifier(),
            logger: Logger(label: "test"))
        let next = try await english.run(.init(since: Date().addingTimeInterval(-7 * 86_400)))
        #expect(next.policies == [
            PolicyTally(rule: "jws-small-pack", decided: 1, amounts: [Money(milli: 6_000, currency: "CNY")]),
        ])
        let nextMarkdown = try String(
            contentsOf: reports.appendingPathComponent("run-\(next.runID)/report.md"), encoding: .utf8)
        #expect(nextMarkdown.contains("## Decided by policies") && nextMarkdown.contains("| jws-small-pack | 1 | CN¥6.00 |"),
                "\(nextMarkdown)")
        let connection = try database.connect()
        let byRun = try connection.query(
            """
            SELECT run_id, count(*)::int FROM reconcile.review_events WHERE actor = 'policy:jws-small-pack'
             GROUP BY run_id ORDER BY run_id
            """).map { "\(try $0.decode(Int64.self, at: 0)) \(try $0.decode(Int.self, at: 1))" }
        #expect(byRun == ["\(report.runID) 2", "\(next.runID) 1"])
    }

    @Test func aDryRunDecidesNothingAndAReportWithoutPoliciesSaysSo() async throws {
        let path = try write(Self.policy, "policy.yaml")
        let dry = try await ReconciliationJob(
            settings: try settings(["RECONCILE_POLICY_FILE": path]), verifier: ScriptedVerifier(),
            logger: Logger(label: "test")
        ).run(.init(since: Date().addingTimeInterval(-7 * 86_400), dryRun: true))
        #expect(dry.policies == [PolicyTally(rule: "jws-small-pack", decided: 0)])
        let plain = try await ReconciliationJob(
            settings: try settings([:]), verifier: ScriptedVerifier(), logger: Logger(label: "test")
        ).run(.init(since: Date().addingTimeInterval(-7 * 86_400)))
        #expect(plain.policies.isEmpty)
        let json = try JSONSerialization.jsonObject(
            with: Data(contentsOf: reports.appendingPathComponent("run-\(plain.runID)/report.json"))) as! [String: Any]
        #expect((json["policies"] as? [String: Any])?.isEmpty == true)
    }

    func reconcile(_ arguments: [String], _ environment: [String: String] = [:]) async throws
        -> (status: Int32, out: String, err: String)
    {
        try await DeskCommandLineTests.reconcile(
            arguments, environment: ["DATABASE_URL": database.url].merging(environment) { $1 }, label: "policy")
    }

    /// `policy check` says a file is valid (exit 0) or where it is not (exit 64: file, line, key,
    /// why); a run given a file that does not load refuses to start with the same line (exit 64)
    /// and records nothing; `policy preview` lists what a run would decide and decides nothing.
    @Test func theCommandLineChecksPreviewsAndRefuses() async throws {
        let good = try write(Self.policy, "good.yaml")
        let checked = try await reconcile(["policy", "check", good])
        #expect(checked.status == 0, "\(checked.err)")
        #expect(checked.out.contains("valid, 1 rule(s)"), "\(checked.out)")
        #expect(checked.out.contains("jws-small-pack (line 2): granted missed_delivery; at most 6.00 CNY; sources jws"),
                "\(checked.out)")

        let bad = try write(Self.policy.replacingOccurrences(of: "sources: [jws]", with: "sources: [jwt]"), "bad.yaml")
        let refused = try await reconcile(["policy", "check", bad])
        #expect(refused.status == 64)
        #expect(refused.err.contains("bad.yaml:6: rules[0].when.sources[0]: jwt is not a source"), "\(refused.err)")

        let run = try await reconcile(["run"], ["RECONCILE_BUNDLE_IDS": "com.hncs.szj", "RECONCILE_POLICY_FILE": bad])
        #expect(run.status == 64 && run.err.contains("bad.yaml:6: rules[0].when.sources[0]"), "\(run.err)")
        let connection = try database.connect()
        #expect(try connection.query("SELECT count(*) FROM reconcile.runs")[0].decode(Int.self, at: 0) == 0)

        // A queue the job made (a dry policy-less run writes none, so a real one without policies).
        _ = try await ReconciliationJob(settings: try settings([:]), verifier: ScriptedVerifier(), logger: Logger(label: "t"))
            .run(.init(since: Date().addingTimeInterval(-7 * 86_400)))
        let ids = try connection.query(
            "SELECT id FROM reconcile.review_items WHERE kind = 'missed_delivery' ORDER BY id"
        ).map { try $0.decode(Int64.self, at: 0) }
        #expect(ids.count == 3)
        let preview = try await reconcile(["policy", "preview", "--json"], ["RECONCILE_POLICY_FILE": good])
        #expect(preview.status == 0, "\(preview.err)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(preview.out.utf8)) as? [[String: Any]])
        #expect(rows.map { $0["review_item_id"] as? Int64 } == ids.prefix(2).map { Optional($0) })
        #expect(rows.allSatisfy { $0["rule"] as? String == "jws-small-pack" && $0["decision"] as? String == "granted" })
        let text = try await reconcile(["policy", "preview", "--file", good])
        #expect(text.status == 0 && text.out.contains("#\(ids[2]) jws-small-pack left to people: over the rule's per_run limit"),
                "\(text.out)")
        #expect(text.out.contains("2 item(s) would be decided (jws-small-pack 2); 1 left to people by a limit."))
        #expect(try connection.query("SELECT count(*) FROM reconcile.review_events WHERE actor LIKE 'policy:%'")[0]
            .decode(Int.self, at: 0) == 0, "a preview decides nothing")
        let none = try await reconcile(["policy", "preview"])
        #expect(none.status == 64 && none.err.contains("RECONCILE_POLICY_FILE"), "\(none.err)")
    }
}
