import AppStore
import AppStoreSimulator
import Foundation
import Logging
import Postgres
import Reconciliation
import TestSupport
import Testing

/// Issue 23 item 3 (SPEC section 5, "a chain of nightly runs equals one run over the whole
/// history"): random nights from a seed, a nightly run after each, checks every night, and at the
/// end one whole-history run over the same inputs in a fresh database. CI runs the fixed seeds
/// below; `scripts/soak --nights N --seed S` runs others (`SOAK_NIGHTS`, `SOAK_SEED`).
@Suite("Multi-night: a chain of nightly runs equals one whole-history run", .serialized)
struct MultiNightTests {
    @Test func withoutTheServerAPI() async throws {
        try await Self.soak(.fromEnvironment(seed: 23, nights: 20, serverAPI: false, everyNight: true))
    }

    @Test func withTheServerAPI() async throws {
        try await Self.soak(.fromEnvironment(seed: 23, nights: 16, serverAPI: true, everyNight: true))
    }

    /// Issue 26: the receiver applies and judges the day's notifications before each night; the
    /// chain still equals the whole-history run, and no fingerprint gets a second item.
    @Test func withTheReceiverBetweenNights() async throws {
        var configuration = MultiNightWorld.Configuration.fromEnvironment(seed: 7, nights: 20, serverAPI: false)
        configuration.receiver = true
        try await Self.soak(configuration)
    }

    static func soak(_ configuration: MultiNightWorld.Configuration) async throws {
        let world = try MultiNightWorld(configuration)
        let started = Date()
        let outcome = try await world.simulator.withRunning { running in try await world.play(running) }
        let text = "multi-night \(configuration) (SOAK_SEED=\(configuration.seed) SOAK_NIGHTS=\(configuration.nights)), "
            + "\(Int(Date().timeIntervalSince(started))) s:\n\(outcome.text)"
        print(text)
        #expect(outcome.problems == 0, "\(text)")
    }
}

extension MultiNightWorld {
    struct Outcome: Sendable {
        var problems: Int
        var text: String
    }

    // MARK: Running

    func settings(_ database: TestDatabase, _ running: RunningSimulator) throws -> Settings {
        var values = [
            "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": Self.bundle,
            "APPLE_VERIFY_RECEIPT_URL": running.productionURL, "APPLE_VERIFY_RECEIPT_SANDBOX_URL": running.sandboxURL,
            "APPLE_ROOT_CERTIFICATES": state.appendingPathComponent(SimulatorCA.FileName.rootCertificate).path,
            "RECONCILE_REPORT_DIR": state.appendingPathComponent("reports-\(database.name)").path,
            "RECONCILE_CONCURRENCY": "4",
        ]
        if configuration.serverAPI {
            values["APPSTORE_API_URL"] = running.serverAPIURL
            values["APPSTORE_API_SANDBOX_URL"] = running.serverAPISandboxURL
            values["APPSTORE_KEY_ID"] = simulator.configuration.apiKeyID
            values["APPSTORE_ISSUER_ID"] = simulator.configuration.issuerID
            values["APPSTORE_PRIVATE_KEY_FILE"] = state.appendingPathComponent(SimulatorAPIKey.privateKeyFileName).path
        }
        if configuration.play {
            values.merge(playEnvironment) { $1 }
            if !configuration.playAPI { values["GOOGLE_PLAY_SERVICE_ACCOUNT_FILE"] = nil }
            values["GOOGLE_PLAY_API_RATE"] = "500"
            // The chain's runs rescue what the app did not acknowledge; a whole-history run, which
            // judges the same inputs beside it, must not change Google's state under the chain.
            values["RECONCILE_PLAY_ACKNOWLEDGE"] = configuration.playAPI && database.name == chain.name ? "on" : "off"
        }
        return try Settings(lookup: values.lookup)
    }

    /// One run as `reconcile run` wires it (each store's verifier, stored notifications, Apple's
    /// Server API, Google Play's voids, orders and acknowledgements).
    func run(_ settings: Settings, until: Date, since: Date? = nil) async throws -> RunReport {
        try await Stores.withJob(settings: settings, logger: quiet) { job in
            try await job.run(.init(since: since, until: until))
        }
    }

    /// One pass of the notification receiver's worker, as `reconcile notifications receive` runs it.
    func receiverPass(_ settings: Settings) async throws -> ReceiverWorker.Pass {
        let quiet = self.quiet
        let connection = self.connection
        return try await AppleServices.withVerifier(settings: settings, logger: quiet) { verifier in
            try await GooglePlayServices.withServices(settings: settings, logger: quiet) { play in
                try await ReceiverWorker(
                    settings: settings, applier: NotificationApplier(verify: verifier.verifyNotification), answerer: nil,
                    forwarder: nil, play: PlayNotificationWorker(services: play, settings: settings, logger: quiet),
                    logger: quiet
                ).pass(on: connection)
            }
        }
    }

    /// Plays every night, then the whole-history run; returns the problems found, described.
    func play(_ running: RunningSimulator) async throws -> Outcome {
        if configuration.play {
            try await simulator.play.prepareKeys(for: [Self.foreignPlayPackage])
            playEnvironment = try await running.playSettings().jobEnvironment
        }
        let settings = try settings(chain, running)
        var lines: [String] = []
        var problems = 0
        var decided: [Int64: String] = [:]
        var openOn: [Key: [Int]] = [:]
        var reported: Set<String> = []
        // The chain's nightly runs, each timed as a whole (scripts/soak prints the sum).
        var chainSeconds = 0.0
        for n in 1...configuration.nights {
            try generate(night: n)
            if configuration.receiver {
                let pass = try await receiverPass(settings)
                if pass.applied > 0 { count("receiver applied notifications between nights") }
                if pass.playApplied > 0 { count("receiver asked Google about its notifications between nights") }
                if pass.itemsOpened > 0 { count("receiver opened items between nights") }
                if pass.itemsAutoResolved > 0 { count("receiver auto-resolved items between nights") }
                let found = try checkReceiverPass(pass, settings: settings, night: n)
                problems += found.count
                lines += found
                if pass.waitingForNightlyRun {
                    problems += 1
                    lines.append("[receiver waited] night \(n): the receiver found the run lock held with no run going")
                }
            }
            if let faultNight, n == faultNight {
                simulator.state.faults = SimulatorFaults(apiErrorCode: 5_000_001)
                lines.append("night \(n): the Server API answers 5000001 to everything")
                count("Server API fault for a night")
            }
            // SOAK_CONTROL=1: every night's window reaches back to before the first night, the
            // control that tells the generator's faults from the nightly path's.
            let kept = try keptInputs()
            let started = Date()
            let report = try await run(
                settings, until: until(n), since: configuration.control ? base.addingTimeInterval(-7 * Self.day) : nil)
            chainSeconds += Date().timeIntervalSince(started)
            simulator.state.faults = .none
            let found = try checkNight(report, decided: &decided)
                + reportRowProblems(report, reader: settings.reportReader, before: kept)
            for problem in found {
                problems += 1
                lines.append(problem.replacingOccurrences(of: "] ", with: "] night \(n): ", options: .anchored))
            }
            for key in try keys(connection, "status IN ('open', 'in_review')") { openOn[key, default: []].append(n) }
            // SOAK_EVERY_NIGHT: the whole-history run after every night too, so that a finding the
            // chain flags only nights late shows, each difference once, on the first night it is seen.
            if configuration.everyNight && n < configuration.nights && n != faultNight {
                let (whole, _, _, _) = try await wholeHistory(running, until: until(n))
                for difference in try compare(whole, openOn: openOn, night: n) {
                    // Once per item and side: the head line without the night.
                    let head = String(difference.prefix { $0 != "\n" })
                        .replacingOccurrences(of: " after night \(n)", with: "")
                    guard reported.insert(head).inserted else { continue }
                    problems += 1
                    lines.append(difference)
                }
            }
        }
        let (whole, wholeReport, wholeDatabase, wholeSeconds) = try await wholeHistory(
            running, until: until(configuration.nights))
        lines.append("whole-history run: \(wholeReport.status.rawValue), \(wholeReport.summary.open) open")
        // What each store's items cover: the kinds open at the end, by store.
        for row in try whole.query(
            "SELECT store, kind, count(*)::int FROM reconcile.review_items WHERE status IN ('open', 'in_review') GROUP BY 1, 2")
        {
            coverage["\(try row.decode(String.self, at: 0)) \(try row.decode(String.self, at: 1)) open at the end",
                     default: 0] += try row.decode(Int.self, at: 2)
        }
        // For scripts/soak (and scripts/bench, which reports their ratio for information).
        lines.append("multi_night_nights: \(configuration.nights)")
        lines.append("multi_night_chain_run_seconds: \(String(format: "%.3f", chainSeconds))")
        lines.append("multi_night_whole_history_run_seconds: \(String(format: "%.3f", wholeSeconds))")
        let differences = try compare(whole, openOn: openOn, night: nil)
        problems += differences.count
        lines += differences
        let desk = try await deskVerdicts(whole, settings: try self.settings(wholeDatabase, running))
        problems += desk.count
        lines += desk
        let (again, hidden) = try await rejudgedAfterAnUpgrade(
            whole, wholeDatabase, running, until: until(configuration.nights))
        lines.append(again)
        problems += hidden.count
        lines += hidden
        let classes = Dictionary(grouping: lines.compactMap { line in
            line.hasPrefix("[") ? String(line.dropFirst().prefix { $0 != "]" }) : nil
        }) { $0 }.map { "\($0.key) ×\($0.value.count)" }.sorted()
        lines.append("covered: " + coverage.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }
            .joined(separator: ", "))
        lines.append("\(problems) problem(s); SOAK-SUMMARY seed=\(configuration.seed) nights=\(configuration.nights) "
            + "server_api=\(configuration.serverAPI) differences: \(classes.isEmpty ? "none" : classes.joined(separator: ", "))")
        return Outcome(problems: problems, text: lines.joined(separator: "\n"))
    }

    // MARK: Every night's checks

    /// The receiver's pass against the whole history judged at the same moment over the same
    /// data (its findings only, no queue written): the next nightly run judges the receiver's
    /// transactions again and would reopen an item the receiver wrongly auto-resolved, so the
    /// nightly comparisons cannot see one. Every item the pass auto-resolved has no finding there
    /// and was not held back (an upload reporting its transaction, or of the account its rule
    /// waits on, still being verified); for every transaction the pass judged, the items still
    /// undecided that nothing holds back are exactly the findings there, and every finding there
    /// has an item.
    func checkReceiverPass(_ pass: ReceiverWorker.Pass, settings: Settings, night: Int) throws -> [String] {
        guard let runID = pass.runID, pass.judged > 0 else { return [] }
        let uploadKinds = FindingKind.allCases.filter(\.isAboutAnUpload).map(\.rawValue)
        let (found, blocked, pendingUsers) = try connection.transaction {
            try Differ(relations: settings.relations).computeFindings(
                Differ.Parameters(
                    settings: settings, runID: runID, judgeBefore: Date().addingTimeInterval(-settings.grace),
                    scope: .wholeHistory(until: Date()), resumesAfter: 0),
                evidence: false, on: connection)
            let found = Dictionary(
                try connection.query(
                    "SELECT fingerprint, transaction_id FROM diff_findings WHERE kind <> ALL($1::text[])", [uploadKinds]
                ).map { (try $0.decode(String.self, at: 0), try $0.decode(String?.self, at: 1)) }
            ) { first, _ in first }
            let blocked = Set(try connection.query("SELECT transaction_id FROM diff_blocked").map {
                try $0.decode(String.self, at: 0)
            })
            let pendingUsers = Set(try connection.query("SELECT user_id FROM diff_pending_users").map {
                try $0.decode(String.self, at: 0)
            })
            return (found, blocked, pendingUsers)
        }
        struct Item {
            var fingerprint: String
            var transaction: String
            var status: String
            var heldBy: String?
            var resolvedByThisPass: Bool
        }
        let judged = Set(try connection.query(
            "SELECT transaction_id FROM reconcile.receiver_judgements WHERE judged_run = $1", [runID]
        ).map { try $0.decode(String.self, at: 0) })
        let items = try connection.query(
            """
            SELECT r.fingerprint, r.transaction_id, r.status, r.held_by_user_id,
                   EXISTS (SELECT 1 FROM reconcile.review_events e
                            WHERE e.review_item_id = r.id AND e.run_id = $1 AND e.to_status = 'auto_resolved')
              FROM reconcile.review_items r
             WHERE r.kind <> ALL($2::text[])
               AND (r.transaction_id = ANY($3::text[])
                    OR EXISTS (SELECT 1 FROM reconcile.review_events e
                                WHERE e.review_item_id = r.id AND e.run_id = $1 AND e.to_status = 'auto_resolved'))
            """, [runID, uploadKinds, Array(judged)]
        ).map {
            Item(fingerprint: try $0.decode(String.self, at: 0), transaction: try $0.decode(String.self, at: 1),
                 status: try $0.decode(String.self, at: 2), heldBy: try $0.decode(String?.self, at: 3),
                 resolvedByThisPass: try $0.decode(Bool.self, at: 4))
        }
        func heldBack(_ item: Item) -> Bool {
            blocked.contains(item.transaction) || item.heldBy.map(pendingUsers.contains) == true
        }
        var problems: [String] = []
        for item in items where item.resolvedByThisPass {
            if found[item.fingerprint] != nil {
                problems.append("[the receiver auto-resolved an item whose finding holds] night \(night): \(item.fingerprint)")
            } else if heldBack(item) {
                problems.append("[the receiver auto-resolved an item held back] night \(night): \(item.fingerprint)")
            }
        }
        let undecided: Set = ["open", "in_review", "awaiting_approval"]
        for item in items where judged.contains(item.transaction) && undecided.contains(item.status) && !heldBack(item) {
            if found[item.fingerprint] == nil {
                problems.append("[the receiver left open an item whose finding is gone] night \(night): \(item.fingerprint)")
            }
        }
        let itemStatus = Dictionary(items.map { ($0.fingerprint, $0.status) }) { first, _ in first }
        for (fingerprint, transaction) in found {
            guard let transaction, judged.contains(transaction), !blocked.contains(transaction) else { continue }
            if itemStatus[fingerprint] == nil || itemStatus[fingerprint] == "auto_resolved" {
                problems.append("[the receiver did not open a finding of a transaction it judged] night \(night): \(fingerprint): "
                    + (itemStatus[fingerprint] ?? "no item"))
            }
        }
        coverage["receiver judgements compared", default: 0] += judged.count
        return problems.sorted()
    }

    func keys(_ connection: Connection, _ condition: String, _ values: [any PostgresEncodable] = []) throws -> Set<Key> {
        Set(try connection.query(
            """
            SELECT kind, coalesce(transaction_id, '-'), coalesce(user_id, '-')
              FROM reconcile.review_items WHERE \(condition)
            """, values
        ).map { Key(kind: try $0.decode(String.self, at: 0), transaction: try $0.decode(String.self, at: 1),
                    user: try $0.decode(String.self, at: 2)) })
    }

    /// One item per fingerprint; report.json's findings are the open items; a decided item
    /// never changes.
    func checkNight(_ report: RunReport, decided: inout [Int64: String]) throws -> [String] {
        var problems: [String] = []
        if !["completed", "completed_with_unresolved"].contains(report.status.rawValue) {
            problems.append("[nightly run failed] the nightly run ended \(report.status.rawValue)")
        }
        let doubled = try connection.query(
            "SELECT fingerprint FROM reconcile.review_items GROUP BY fingerprint HAVING count(*) > 1"
        ).map { try $0.decode(String.self, at: 0) }
        if !doubled.isEmpty { problems.append("[two items for one fingerprint] \(doubled)") }

        let directory = URL(fileURLWithPath: report.reportDirectory ?? "")
        let data = try Data(contentsOf: directory.appendingPathComponent("report.json"))
        let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        let listed = Set(((json?["findings"] as? [[String: Any]]) ?? []).map {
            Key(kind: $0["kind"] as? String ?? "?", transaction: $0["transaction_id"] as? String ?? "-",
                user: $0["user_id"] as? String ?? "-")
        })
        let open = try keys(connection, "status IN ('open', 'in_review')")
        if listed != open {
            problems.append(
                "[report.json is not the open items] report.json lists \(listed.subtracting(open).sorted()) that are not open items, "
                    + "and not \(open.subtracting(listed).sorted()) that are")
        }

        // Issue 36 item 13 (SPEC section 5): a consumable's rows that make up Apple's quantity (a
        // correction credited as a second row, the job's own quantity_mismatch grant carried out)
        // are no duplicate: an open duplicate_delivery holds more units than Apple sold.
        let notDuplicates = try connection.query(
            """
            SELECT r.fingerprint FROM reconcile.review_items r
              JOIN reconcile.apple_transactions a ON a.transaction_id = r.transaction_id
              JOIN reconcile.products p ON p.product_id = a.product_id AND p.product_type = 'consumable'
             WHERE r.kind = 'duplicate_delivery' AND r.status IN ('open', 'in_review')
               AND (SELECT coalesce(sum(d.quantity), 0) FROM reconcile.deliveries d
                     WHERE d.transaction_id = r.transaction_id AND d.revoked_at IS NULL) <= a.quantity
            """
        ).map { try $0.decode(String.self, at: 0) }
        if !notDuplicates.isEmpty {
            problems.append("[a duplicate that makes up Apple's quantity] \(notDuplicates.sorted())")
        }

        let now = try connection.query(
            """
            SELECT id, concat_ws(' | ', fingerprint, kind, status, transaction_id, user_id, resolution, resolved_by,
                                 resolved_at, note, evidence::text)
              FROM reconcile.review_items WHERE status IN ('resolved', 'dismissed')
            """)
        var seen: [Int64: String] = [:]
        for row in now { seen[try row.decode(Int64.self, at: 0)] = try row.decode(String.self, at: 1) }
        for (id, before) in decided where seen[id] != before {
            problems.append("[a decided item changed] decided item \(id) changed: was \(before), is \(seen[id] ?? "gone")")
        }
        decided = seen
        return problems
    }

    // MARK: The whole-history run

    /// The chain's inputs, ids and timestamps kept, in a fresh database, judged by one run (timed).
    func wholeHistory(
        _ running: RunningSimulator, until: Date
    ) async throws -> (connection: Connection, report: RunReport, database: TestDatabase, seconds: Double) {
        let fresh = try TestDatabase.create("multi_night_whole")
        let target = try fresh.connect()
        _ = try Schema.migrate(target)
        for (table, overriding) in [
            ("products", ""), ("account_tokens", ""), ("receipt_uploads", "OVERRIDING SYSTEM VALUE"),
            ("deliveries", "OVERRIDING SYSTEM VALUE"), ("notifications", "OVERRIDING SYSTEM VALUE"),
        ] {
            let rows = try connection.query("SELECT coalesce(json_agg(t), '[]')::text FROM reconcile.\(table) t")[0]
                .decode(String.self, at: 0)
            try target.execute(
                """
                INSERT INTO reconcile.\(table) \(overriding)
                SELECT * FROM json_populate_recordset(NULL::reconcile.\(table), $1::json)
                """, [rows])
        }
        // Google Play's notifications as the receiver's listener stored them, none asked of Google
        // yet: the whole-history run asks about each (its `play_api` stage), as a run after a
        // receiver whose worker never ran would. Those the listener stored as not to be asked
        // (garbage, a test message) stay as they are.
        // (The chain's runs are not copied: no notification names one.)
        let play = try connection.query(
            "SELECT coalesce(json_agg(to_jsonb(t) - 'processed_run'), '[]')::text FROM reconcile.play_notifications t"
        )[0].decode(String.self, at: 0)
        try target.execute(
            """
            INSERT INTO reconcile.play_notifications
            SELECT * FROM json_populate_recordset(NULL::reconcile.play_notifications, $1::json)
            """, [play])
        try target.execute(
            """
            UPDATE reconcile.play_notifications
               SET state = 'pending', attempts = 0, next_attempt_at = now(), last_error = NULL, transaction_id = NULL,
                   processed_at = NULL
             WHERE state IN ('applied', 'not_found', 'gone') OR (state = 'pending' AND attempts > 0)
            """)
        let freshSettings = try settings(fresh, running)
        let started = Date()
        let report = try await run(freshSettings, until: until)
        return (target, report, fresh, Date().timeIntervalSince(started))
    }

    /// The fresh database judged again as after an upgrade that adds a rule: the judged inputs'
    /// digest differs and the queue is empty (as it is of a new kind's items), so the run judges
    /// the whole history, and since every upload is verified already, its first pass
    /// (`scope/whole_history.sql`) alone decides which transactions are judged. It must open
    /// exactly what the first whole-history run (which verified every upload, so judged every
    /// transaction) opened: a finding the first pass calls plainly clean would be missing (a new
    /// rule whose condition the first pass does not know of, say).
    func rejudgedAfterAnUpgrade(
        _ whole: Connection, _ database: TestDatabase, _ running: RunningSimulator, until: Date
    ) async throws -> (summary: String, differences: [String]) {
        let before = try keys(whole, "status IN ('open', 'in_review')")
        try whole.execute("UPDATE reconcile.runs SET judged_inputs = 'an older version of the rules'")
        try whole.execute("TRUNCATE reconcile.review_items CASCADE")
        let report = try await run(try settings(database, running), until: until)
        let after = try keys(whole, "status IN ('open', 'in_review')")
        var lines: [String] = []
        for key in before.subtracting(after).sorted() {
            lines.append("[the whole-history pass hides a finding] MISSING after the first pass: \(key)")
        }
        for key in after.subtracting(before).sorted() {
            lines.append("[the whole-history pass finds more] EXTRA after the first pass: \(key)")
        }
        return ("whole-history run again, as after an upgrade: \(report.status.rawValue), \(report.summary.open) open",
                lines)
    }

    /// The whole-history run's open findings against the chain's open ones plus its decided
    /// ones (a decided item the whole-history run finds open is one whose condition still holds).
    func compare(_ whole: Connection, openOn: [Key: [Int]], night: Int?) throws -> [String] {
        let wholeOpen = try keys(whole, "status IN ('open', 'in_review')")
        let chainOpen = try keys(connection, "status IN ('open', 'in_review')")
        // A decided item is one per fingerprint: its condition still holds when the whole-history
        // run has the fingerprint open, whichever account the finding names now.
        let decidedFingerprints = Set(try connection.query(
            "SELECT fingerprint FROM reconcile.review_items WHERE status IN ('resolved', 'dismissed', 'awaiting_approval')"
        ).map { try $0.decode(String.self, at: 0) })
        let stillHolding = try keys(whole, "status IN ('open', 'in_review') AND fingerprint = ANY($1::text[])",
                                    [Array(decidedFingerprints)])
        let missing = wholeOpen.subtracting(chainOpen).subtracting(stillHolding)
        sharedInWhole = Set(wholeOpen.filter { $0.kind == "shared_receipt" }.map(\.transaction))
        let extra = chainOpen.subtracting(wholeOpen)
        var lines: [String] = []
        for key in missing.sorted() {
            let history = openOn[key].map { "open on nights \($0.map(String.init).joined(separator: ",")), then not" }
                ?? "never open"
            let twin = extra.contains { $0.kind == key.kind && $0.transaction == key.transaction }
            lines.append(try describe(
                key, missing: true, chain: history, evidence: evidence(whole, key), twin: twin, night: night))
        }
        for key in extra.sorted() {
            let twin = missing.contains { $0.kind == key.kind && $0.transaction == key.transaction }
            lines.append(try describe(
                key, missing: false, chain: "open", evidence: evidence(connection, key), twin: twin, night: night))
        }
        // An item open in both names the product, original transaction and upload its finding
        // names now (sql/diff/81_queue_upsert.sql: an open item follows its finding).
        let wholeNames = try itemNames(whole)
        for (fingerprint, names) in try itemNames(connection).sorted(by: { $0.key < $1.key }) {
            if let other = wholeNames[fingerprint], other != names {
                lines.append("[an open item names what its finding no longer does] \(fingerprint): the chain's item "
                    + "names \(names), the whole-history run's \(other)")
            }
        }
        return lines
    }

    /// Each open item's product, original transaction and upload, by fingerprint.
    func itemNames(_ connection: Connection) throws -> [String: String] {
        Dictionary(uniqueKeysWithValues: try connection.query(
            """
            SELECT fingerprint, concat_ws(' ', coalesce(product_id, '-'), coalesce(original_transaction_id, '-'),
                                          coalesce(upload_id::text, '-'))
              FROM reconcile.review_items WHERE status IN ('open', 'in_review')
            """
        ).map { (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1)) })
    }

    /// SPEC section 13: the desk's verdicts are the nightly rules' over the same data. Every
    /// account's `lookup --user` over the whole-history run's database: each transaction's verdict
    /// is its most severe open finding there, and `ok` or `pending` when it has none.
    func deskVerdicts(_ whole: Connection, settings: Settings) async throws -> [String] {
        var expected: [String: FindingKind] = [:]
        for row in try whole.query(
            "SELECT transaction_id, kind FROM reconcile.review_items WHERE status IN ('open', 'in_review') AND transaction_id IS NOT NULL")
        {
            let kind = try #require(FindingKind(rawValue: try row.decode(String.self, at: 1)))
            let transaction = try row.decode(String.self, at: 0)
            if let held = expected[transaction],
               (held.severity.rank, held.rawValue) <= (kind.severity.rank, kind.rawValue) { continue }
            expected[transaction] = kind
        }
        let desk = DeskService(settings: settings, serverAPI: nil, logger: quiet)
        var lines: [String] = []
        var looked = 0
        for user in users {
            for transaction in try await desk.lookup(try DeskQuery(.user, user), on: whole).transactions {
                looked += 1
                let wanted = expected[transaction.transactionID]
                let matches = wanted.map { transaction.verdict == TransactionVerdict($0) }
                    ?? [TransactionVerdict.ok, .pending].contains(transaction.verdict)
                if !matches {
                    lines.append("[the desk's verdict is not the run's] \(user)'s \(transaction.transactionID): "
                        + "desk \(transaction.verdict), whole-history run \(wanted?.rawValue ?? "no finding")")
                }
            }
        }
        coverage["desk verdicts compared", default: 0] += looked
        return lines
    }

    func evidence(_ connection: Connection, _ key: Key) throws -> String {
        try connection.query(
            """
            SELECT evidence::text FROM reconcile.review_items
             WHERE kind = $1 AND coalesce(transaction_id, '-') = $2 AND coalesce(user_id, '-') = $3 LIMIT 1
            """, [key.kind, key.transaction, key.user]
        ).first?.decode(String.self, at: 0) ?? "-"
    }

    func describe(
        _ key: Key, missing: Bool, chain: String, evidence: String, twin: Bool, night: Int?
    ) throws -> String {
        let verifications = try connection.query(
            """
            SELECT concat_ws(' ', u.id, u.user_id, 'uploaded_at', u.uploaded_at, coalesce(v.state, 'NEVER READ'))
              FROM reconcile.receipt_uploads u LEFT JOIN reconcile.upload_verifications v ON v.upload_id = u.id
             WHERE u.claimed_transaction_id = $1 ORDER BY u.id
            """, [key.transaction]
        ).map { try $0.decode(String.self, at: 0) }
        let rows = try connection.query(
            """
            SELECT concat_ws(' ', source, product_id, 'bought', purchase_date, 'revoked',
                             coalesce(revocation_date::text, '-'), 'first seen by run', first_seen_run)
              FROM reconcile.apple_transactions WHERE transaction_id = $1
            """, [key.transaction]
        ).map { try $0.decode(String.self, at: 0) }
        let items = try connection.query(
            "SELECT concat_ws(' ', kind, user_id, status) FROM reconcile.review_items WHERE transaction_id = $1 ORDER BY id",
            [key.transaction]
        ).map { try $0.decode(String.self, at: 0) }
        let when = night.map { "after night \($0)" } ?? "at the end"
        let what = missing ? "MISSING from the chain \(when) (whole-history run has it open)"
            : "EXTRA in the chain \(when)"
        return """
            [\(twin ? "the item's account is not the finding's"
                : classify(key, missing: missing, uploaded: !verifications.isEmpty))] \(what): \(key)
                chain: \(chain)
                uploads in the chain's database: \(verifications.isEmpty ? "none" : verifications.joined(separator: "; "))
                the chain's white row: \(rows.isEmpty ? "none" : rows.joined(separator: "; "))
                the chain's items of it: \(items.isEmpty ? "none" : items.joined(separator: "; "))
                timeline: \((timeline[key.transaction] ?? ["-"]).joined(separator: "; "))
                evidence: \(evidence.prefix(1500))
            """
    }

    /// The class of issue 23 a difference looks like, from what the generator did: a reading aid,
    /// not a proof.
    func classify(_ key: Key, missing: Bool, uploaded: Bool) -> String {
        if key.transaction.hasPrefix("GPA.") || playPurchases.contains(where: { $0.token == key.transaction }) {
            return "Google Play, \(missing ? "missing" : "false alarm")"
        }
        let purchase = purchases.first { $0.id == key.transaction }
        if tiedReceipts.contains(key.transaction) { return "receipts of one second, before and after Apple's change" }
        if lateOldUploads.contains(key.transaction) { return "late upload with old uploaded_at" }
        if key.kind == "unverified_delivery" && configuration.serverAPI && backdatedGrants.contains(key.transaction) {
            return "backdated ledger change, Server API"
        }
        if configuration.serverAPI
            && (key.kind == "shared_receipt" || (!uploaded && key.user != "-" && key.kind != "unverified_delivery"))
        {
            return "history counted as an upload"
        }
        if !missing && configuration.serverAPI && sharedInWhole.contains(key.transaction) {
            return "history counted as an upload"
        }
        if !missing { return "unclassified false alarm" }
        if let purchase, key.kind == "wrong_account" || key.kind == "missed_delivery",
           purchase.token != nil || purchase.username != nil, purchase.buyer != purchase.uploader
        {
            let later = firstKnown[purchase.buyer].map { $0 > purchase.night } ?? true
            return "binding to an account \(later ? "first known later" : "outside the night's scope")"
        }
        if appleOnlyNews.contains(key.transaction) || notifiedNews.contains(key.transaction) {
            return "Apple's change told by a notification or history only"
        }
        if purchase != nil && configuration.serverAPI && purchase?.customer.hasSuffix("-2") == true {
            return "second Apple account"
        }
        return "unclassified"
    }
}
