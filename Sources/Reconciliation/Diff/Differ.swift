import Foundation
import Postgres

/// Diffs Apple's transactions (the white table) against the delivery ledger (the black table)
/// inside PostgreSQL and keeps the review queue in step (SPEC sections 5 and 6).
///
/// The SQL lives in `sql/diff/`, one file per stage and one per finding kind; this type runs
/// them in order. Every stage is set-based over temporary tables emptied at commit (they live as
/// long as the connection: `checks/work_tables.sql`); no table is pulled into the process.
/// docs/architecture.md draws the stages and their tables.
public struct Differ: Sendable {
    /// The operator's relations the diff reads (SPEC section 2).
    public struct Relations: Sendable, Equatable {
        public var uploads: QualifiedRelation
        public var deliveries: QualifiedRelation
        public var products: QualifiedRelation

        public init(uploads: QualifiedRelation, deliveries: QualifiedRelation, products: QualifiedRelation) {
            self.uploads = uploads
            self.deliveries = deliveries
            self.products = products
        }

        /// The tables of the job's own schema (the defaults of SPEC section 9).
        public static let standard = Relations(
            uploads: QualifiedRelation("reconcile.receipt_uploads")!,
            deliveries: QualifiedRelation("reconcile.deliveries")!,
            products: QualifiedRelation("reconcile.products")!)

        /// By the names the SQL files use (`:uploads`, `:deliveries`, `:products`).
        var byName: [String: QualifiedRelation] {
            ["uploads": uploads, "deliveries": deliveries, "products": products]
        }
    }

    /// What the diff needs to know about the run.
    public struct Parameters: Sendable {
        /// The run the findings belong to.
        public var runID: Int64
        /// Accepted bundle ids.
        public var bundleIDs: [String]
        /// Accepted Google Play package names (`GOOGLE_PLAY_PACKAGE_NAMES`); empty: Play is off,
        /// and no Play transaction or ledger row is judged.
        public var packageNames: [String] = []
        /// Which purchases count as real money.
        public var environment: Settings.Environment
        /// Purchases and deliveries younger than this instant are not judged (run start − grace).
        public var judgeBefore: Date
        /// Which transactions the diff judges.
        public var scope: DiffScope
        /// With Server API credentials, a delivery is unknown to Apple only after Get Transaction
        /// Info answered not found.
        public var serverAPIEnabled: Bool
        /// The last run that finished (0 for none). Runs after it that ended without finishing
        /// (killed, failed, interrupted, dry) verified uploads and confirmed transactions that no
        /// diff has judged since: they are in this run's scope as if this run had done the work.
        public var resumesAfter: Int64
        /// A window run also judges the ledger's changes (`reconcile.ledger_changes`) that this
        /// snapshot (`pg_snapshot` text: the last finished run's) did not show as committed. Nil
        /// judges the window by `delivered_at` alone.
        public var ledgerChangesAfter: String?
        /// A window run that judges the ledger's changes may carry over the open review items
        /// none of whose inputs changed since the last finished run, unjudged: their evidence and
        /// queue row stay, the report lists them as they are (`scope/changed_bindings.sql`
        /// says why that is safe). False judges every open item again.
        public var carriesUnchangedItems = false

        /// Each store's accepted apps as `store/app` (`reconcile.app_accepted`).
        var acceptedApps: [String] { Self.acceptedApps(bundleIDs: bundleIDs, packageNames: packageNames) }

        /// The accepted apps of these bundle ids and Play packages as `reconcile.app_accepted` takes them.
        static func acceptedApps(bundleIDs: [String], packageNames: [String]) -> [String] {
            bundleIDs.map { "\(Store.appStore.rawValue)/\($0)" } + packageNames.map { "\(Store.googlePlay.rawValue)/\($0)" }
        }

        /// The stores whose transactions and ledger rows are judged: the App Store always (as before
        /// a second store), Google Play when its packages are named.
        var storesOn: [Store] { [.appStore] + (packageNames.isEmpty ? [] : [.googlePlay]) }

        /// With Play's service account (`GOOGLE_PLAY_SERVICE_ACCOUNT_FILE`), a Play delivery is
        /// unknown to Google only after the Orders API (`orders.get`) answered not found.
        public var playAPIEnabled = false

        /// The stores whose unverified deliveries wait for their API's "not found" in
        /// `reconcile.transaction_lookups`: Apple's with the Server API (Get Transaction Info),
        /// Google Play's with a service account (`PlayOrderLookups`), while Play is on.
        var apiStores: [Store] {
            (serverAPIEnabled ? [.appStore] : []) + (playAPIEnabled && !packageNames.isEmpty ? [.googlePlay] : [])
        }

        /// Whether this diff judges every open review item again (see `carriesUnchangedItems`).
        var judgesEveryOpenItem: Bool {
            guard carriesUnchangedItems, ledgerChangesAfter != nil, case .window = scope else { return true }
            return false
        }

        /// Creates the parameters; `resumesAfter` nil scopes the run to its own work.
        public init(
            runID: Int64, bundleIDs: [String], environment: Settings.Environment, judgeBefore: Date, scope: DiffScope,
            serverAPIEnabled: Bool, resumesAfter: Int64? = nil, ledgerChangesAfter: String? = nil
        ) {
            self.runID = runID
            self.ledgerChangesAfter = ledgerChangesAfter
            self.resumesAfter = resumesAfter ?? runID - 1
            self.bundleIDs = bundleIDs
            self.environment = environment
            self.judgeBefore = judgeBefore
            self.scope = scope
            self.serverAPIEnabled = serverAPIEnabled
        }

        /// A run's parameters: a window from `since`, or the whole history when `since` is nil.
        public init(
            runID: Int64, bundleIDs: [String], environment: Settings.Environment, judgeBefore: Date, since: Date?,
            until: Date, serverAPIEnabled: Bool, resumesAfter: Int64? = nil, ledgerChangesAfter: String? = nil
        ) {
            self.init(
                runID: runID, bundleIDs: bundleIDs, environment: environment, judgeBefore: judgeBefore,
                scope: since.map { .window(since: $0, until: until) } ?? .wholeHistory(until: until),
                serverAPIEnabled: serverAPIEnabled, resumesAfter: resumesAfter, ledgerChangesAfter: ledgerChangesAfter)
        }

        /// The parameters the settings give (the stores' apps, the environment, which APIs are
        /// configured) for one scope.
        public init(settings: Settings, runID: Int64, judgeBefore: Date, scope: DiffScope, resumesAfter: Int64? = nil) {
            self.init(
                runID: runID, bundleIDs: settings.bundleIDs, environment: settings.environment, judgeBefore: judgeBefore,
                scope: scope, serverAPIEnabled: settings.serverAPIKey != nil, resumesAfter: resumesAfter)
            packageNames = settings.googlePlay.packageNames
            playAPIEnabled = settings.googlePlay.serviceAccountFile != nil
        }

        /// A run's parameters: its window (the whole history without `since`), what it resumes,
        /// and the ledger changes it judges (`RunLedger.ledgerChangesAfter`).
        public init(run: RunContext, settings: Settings, ledgerChangesAfter: String? = nil) {
            self.init(
                settings: settings, runID: run.id, judgeBefore: run.judgeBefore,
                scope: run.since.map { .window(since: $0, until: run.until) } ?? .wholeHistory(until: run.until),
                resumesAfter: run.resumesAfter)
            self.ledgerChangesAfter = ledgerChangesAfter
        }

        /// The values the SQL files of the scope's plan take as `:'name'`, by name: exactly those
        /// (`Differ.Stages` refuses one that no file of the plan takes).
        var values: SQLValues {
            var values: SQLValues = [
                "work_mem": Differ.workMem, "random_page_cost": Differ.randomPageCost,
                "counted": environment.apple.rawValue, "judge_before": judgeBefore,
                "accepted_apps": acceptedApps, "stores_on": storesOn.map(\.rawValue),
                "api_stores": apiStores.map(\.rawValue),
            ]
            values.merge(Differ.kindValues) { current, _ in current }
            // What was touched by the runs since the last finished one (`scope/touched_by_run.sql`):
            // a run's scopes, not the desk's transactions.
            let touched: SQLValues = ["resumes_after": resumesAfter, "judge_open_items": judgesEveryOpenItem]
            switch scope {
            case .window(let since, let until):
                values.merge(touched) { current, _ in current }
                values["since"] = since
                values["until"] = until
                if let ledgerChangesAfter { values["ledger_changes_after"] = ledgerChangesAfter }
            case .wholeHistory(let until):
                values.merge(touched) { current, _ in current }
                values["pass_work_mem"] = Differ.passWorkMem
                values["until"] = until
            case .transactions(let ids):
                values["transaction_ids"] = ids
            }
            return values
        }
    }

    /// What the queue upsert did.
    public struct QueueChanges: Sendable, Equatable {
        /// Items created by this run.
        public var created = 0
        /// Items seen again (still open, or touched but decided by a person).
        public var refreshed = 0
        /// Items auto-resolved because their condition is gone.
        public var autoResolved = 0
        /// Auto-resolved items whose condition came back.
        public var reopened = 0

        /// No changes (a dry run).
        public init() {}
    }

    public let relations: Relations

    public init(relations: Relations) {
        self.relations = relations
    }

    /// Memory PostgreSQL may use for each hash or sort of the diff (its transaction only): the
    /// stages after the scope hash up to a few hundred thousand rows in memory (the whole
    /// history's two passes over the whole tables take ``passWorkMem``). Server memory, not this
    /// process's.
    public static let workMem = "256MB"

    /// Memory for each hash of the two passes over the whole tables that start a run over the
    /// whole history (`scope/whole_history.sql`): hashes of millions of keys split into batches of
    /// a few MB ran twice as fast as one of 256 MB, whose probes miss the CPU's caches
    /// (docs/benchmarks.md, twelfth session).
    public static let passWorkMem = "4MB"

    /// How the diff's statements price a page read out of order (`00_session.sql` says why).
    public static let randomPageCost = "1.1"

    /// Computes the findings into the temporary table `diff_findings` (emptied at commit); call
    /// inside a transaction, then `upsertQueue` or read the findings.
    ///
    /// The findings are computed exactly over `diff_scope`, the transactions the diff can have
    /// changed. A window run collects them from indexes; a run over the whole history would put
    /// every transaction there, so it first keeps only those one pass over the white table, the
    /// ledger and the claims cannot prove clean.
    ///
    /// `evidence` false leaves `diff_findings.evidence` unset: the desk's picture reads only the
    /// findings' kinds, and only the queue and the reports read evidence.
    public func computeFindings(_ parameters: Parameters, evidence: Bool = true, on connection: Connection) throws {
        let scope = DiffPlan.Scope(parameters.scope)
        var stages = try Stages(
            connection: connection, relations: relations.byName, values: parameters.values, files: DiffPlan.files(scope))
        let tables = try stages.run("checks/work_tables.sql")[0]
        guard try tables.decode(Bool.self, "empty") else {
            throw SQLScriptError(problem: "the diff's work tables already hold rows: one diff per transaction")
        }
        stages.declared = try tables.decode(Bool.self, "declared")
        var narrow = false
        // The enable_seqscan a run of by-index steps replaced, restored after the last of them.
        var savedSeqScan: String?
        for step in DiffPlan.steps[scope]! {
            if step == DiffPlan.firstJudgingStep {
                let size = try stages.run("checks/scope_size.sql")[0]
                narrow = try size.decode(Bool.self, "narrow")
                stages.analysing = try size.decode(Bool.self, "analyse")
            }
            switch step.when {
            case .always: break
            case .ledgerChangesNoted: guard parameters.ledgerChangesAfter != nil else { continue }
            case .usernamesUnresolved: guard try stages.run("checks/usernames_unresolved.sql").first != nil else { continue }
            case .evidenceWanted: guard evidence else { continue }
            case .scopeHasEnd: guard parameters.scope.until != nil else { continue }
            case .ruleApplies: break
            }
            if step.byIndexWhenNarrow && narrow {
                if savedSeqScan == nil { savedSeqScan = try stages.lookUpByIndex() }
            } else if let saved = savedSeqScan {
                try stages.queueRestoringSeqScan(saved)
                savedSeqScan = nil
            }
            if step.when == .ruleApplies {
                for kind in FindingKind.allCases where kind.applies(in: parameters.environment) {
                    try stages.queue(DiffSQL.rule(kind))
                }
            } else {
                try stages.queue(step.file)
            }
        }
        if let saved = savedSeqScan { try stages.queueRestoringSeqScan(saved) }
        try stages.flush()
    }

    /// A digest of what every finding depends on beyond its own rows: the rules (``rules``), the
    /// settings that decide findings (`settings`: their text) and the product catalogue
    /// (`01_judged_inputs.sql`). Two runs with the same digest judge alike whatever of those.
    /// Nil when the deliveries relation's changes are not noted: then no item may be carried over.
    public func judgedInputs(settings: String, on connection: Connection) throws -> String? {
        let named = relations.byName.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        var stages = try Stages(
            connection: connection, relations: relations.byName,
            values: ["rules": Self.judgedRules, "settings": ([settings] + named).joined(separator: "\n"),
                     "deliveries_name": relations.deliveries.description],
            files: ["01_judged_inputs.sql"])
        return try stages.run("01_judged_inputs.sql")[0].decode(String?.self, "digest")
    }

    /// What the finding kinds give the diff's SQL: their names, severities and suggested actions
    /// (parallel arrays, `50_findings_table.sql`), and which are about uploads.
    static let kindValues: [String: any PostgresEncodable & Sendable] = [
        "kinds": FindingKind.allCases.map(\.rawValue),
        "severities": FindingKind.allCases.map(\.severity.rawValue),
        "severity_ranks": FindingKind.allCases.map(\.severity.rank),
        "suggested_actions": FindingKind.allCases.map(\.suggestedAction.rawValue),
        "upload_kinds": FindingKind.uploadKinds,
    ]

    /// The rules as the judged inputs' digest reads them: every file of the diff's SQL, and the
    /// values the kinds give it (``kindValues``), which the queue's items take (a release that
    /// changes a kind's severity judges every open item again, so that they take it).
    static var judgedRules: String {
        let files = DiffSQL.paths.map { "\($0)\n\(DiffSQL.text($0) ?? "")" }
        let kinds = kindValues.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.postgresText ?? "")" }
        return (files + kinds).joined(separator: "\n")
    }

    /// The support desk's picture of the transactions `computeFindings` just judged (same
    /// transaction): `sql/diff/90_picture.sql`, then `91_picture_details.sql` for the
    /// transactions `details` picks from them (all when nil): their ledger rows, uploads and items.
    func picture(
        _ parameters: Parameters, details: (@Sendable ([CustomerPicture.Transaction]) -> [String])? = nil,
        on connection: Connection
    ) throws -> [CustomerPicture.Transaction] {
        var stages = try Stages(
            connection: connection, relations: relations.byName,
            values: ["judge_before": parameters.judgeBefore, "api_stores": parameters.apiStores.map(\.rawValue)],
            files: ["90_picture.sql"])
        let transactions = try stages.run("90_picture.sql")
        let bare = try CustomerPicture.Transaction.assemble(transactions: transactions)
        let wanted = details?(bare) ?? bare.map(\.transactionID)
        guard !wanted.isEmpty else { return bare }
        var detailed = try Stages(
            connection: connection, relations: relations.byName, values: ["detail_ids": wanted],
            files: ["91_picture_details.sql"])
        let results = try detailed.results("91_picture_details.sql")
        guard results.count == 3 else {
            throw SQLScriptError(problem: "sql/diff/91_picture_details.sql must have 3 statements")
        }
        return try CustomerPicture.Transaction.attaching(
            deliveries: results[0], uploads: results[1], reviewItems: results[2], to: bare)
    }

    /// Upserts the review queue from `diff_findings` (SPEC section 6): one item per fingerprint
    /// ever, refreshed when seen again, auto-resolved when its condition is gone, reopened only if
    /// it was auto-resolved. Items a person resolved or dismissed keep their status. Every status
    /// change writes a review event in the same transaction.
    ///
    /// `resolving` says which items whose finding is gone are auto-resolved: those of the scope
    /// (a run), none (the support desk's `--enqueue`, which only adds, refreshes and reopens), or
    /// those of exactly some transactions (the receiver's judgement of what it applied). Items a
    /// window run carried over unchanged (`75_unchanged.sql`) are not touched: their
    /// `last_seen_run` stays the last run that judged them (82_queue_auto_resolve.sql reads the
    /// scope, not that column).
    public func upsertQueue(
        runID: Int64, resolving: GoneItems = .inScope, actor: ReviewActor = .job, on connection: Connection
    ) throws -> QueueChanges {
        let only: [String]? = if case .only(let transactions) = resolving { transactions } else { nil }
        var stages = try Stages(
            connection: connection, relations: relations.byName,
            values: [
                "run_id": runID, "actor": actor.name, "upload_kinds": FindingKind.uploadKinds, "only_transaction_ids": only,
            ],
            files: ["80_queue_reopen.sql", "81_queue_upsert.sql", "82_queue_auto_resolve.sql"])
        var changes = QueueChanges()
        changes.reopened = try stages.execute("80_queue_reopen.sql")
        let rows = try stages.run("81_queue_upsert.sql")
        changes.created = try rows[0].decode(Int.self, "created")
        changes.refreshed = try rows[0].decode(Int.self, "refreshed")
        Failpoint.pass("queue.upsert")
        if case .nothing = resolving { return changes }
        changes.autoResolved = try stages.execute("82_queue_auto_resolve.sql")
        return changes
    }

    /// Which open items whose finding is gone ``upsertQueue(runID:resolving:actor:on:)`` auto-resolves.
    public enum GoneItems: Sendable {
        /// Every item the scope judged.
        case inScope
        /// None.
        case nothing
        /// Those of exactly these transactions, none about an upload.
        case only([String])
    }

    /// Runs the statements of `sql/diff/` files with one set of relations and values, bound as every
    /// other file's are (``SQLFile``): a value a statement lacks, or one that no file the stages may
    /// run takes, is refused before anything reaches PostgreSQL.
    struct Stages {
        let connection: Connection
        let relations: [String: QualifiedRelation]
        let values: SQLValues

        /// Stages that may run `files` (relative to `sql/diff/`), all of them given `values`.
        init(
            connection: Connection, relations: [String: QualifiedRelation], values: SQLValues, files: [String]
        ) throws {
            self.connection = connection
            self.relations = relations
            self.values = values
            try SQLFile.refuseLeftOver(values, in: files.map(Self.file))
        }

        private static func file(_ path: String) -> SQLFile { SQLFile("diff/" + path) }

        /// Whether the statements that only inform the planner (`ANALYZE`, indexes that are not
        /// unique) run; `DiffPlan.firstJudgingStep` says when they do not.
        var analysing = true

        /// Whether the diff's work tables already exist on this connection
        /// (`checks/work_tables.sql`): then the statements that declare them if missing are skipped.
        var declared = false

        /// Statements bound and waiting to be sent together (`flush`), each with its file.
        var queued: [(file: String, sql: String, parameters: [any PostgresEncodable])] = []

        /// The statements of a file this diff runs (`declared` and `analysing` say which are skipped).
        private func runnable(_ path: String) throws -> [(sql: String, parameters: [any PostgresEncodable])] {
            try Self.file(path).bound(sharing: values, relations: relations) { statement in
                !(statement.declaresIfMissing ? declared : !analysing && statement.onlyInformsThePlanner)
            }
        }

        private func all(_ path: String) throws -> [(sql: String, parameters: [any PostgresEncodable])] {
            try Self.file(path).bound(sharing: values, relations: relations)
        }

        /// Runs every statement of a file now, after those queued; returns the rows of the last.
        @discardableResult
        mutating func run(_ path: String) throws -> [Row] {
            try flush()
            var rows: [Row] = []
            for (sql, parameters) in try runnable(path) {
                rows = try Self.file(path).naming { try connection.query(sql, parameters) }
            }
            return rows
        }

        /// Queues every statement of a file, to be sent with the others in one round trip when a
        /// result is next needed (`flush`): the stages return nothing the runner reads, and the
        /// desk's lookup ran sixty statements, each a round trip (docs/benchmarks.md).
        mutating func queue(_ path: String) throws {
            for (sql, parameters) in try runnable(path) { queued.append((path, sql, parameters)) }
        }

        /// Sends what is queued (``Connection/pipeline(_:)``); its first failure is thrown.
        mutating func flush() throws {
            guard !queued.isEmpty else { return }
            defer { queued.removeAll() }
            do {
                try connection.pipeline(queued.map { ($0.sql, $0.parameters) })
            } catch var error as PostgresError {
                // The statement that failed, by its text: the error names its file.
                if let failed = queued.first(where: { $0.sql == error.sql }) { error.file = "sql/diff/\(failed.file)" }
                throw error
            }
        }

        /// Runs every statement of a file in one round trip (after those queued); returns the rows
        /// of each.
        mutating func results(_ path: String) throws -> [[Row]] {
            try flush()
            let statements = try all(path)
            return try Self.file(path).naming { try connection.pipeline(statements) }
        }

        /// Runs a file of one statement; returns how many rows it affected.
        func execute(_ path: String) throws -> Int {
            var affected = 0
            for (sql, parameters) in try all(path) {
                affected = try Self.file(path).naming { try connection.execute(sql, parameters) }
            }
            return affected
        }

        /// Prices sequential scans out (`DiffPlan.Step.byIndexWhenNarrow` says why), after what is
        /// queued, until `queueRestoringSeqScan` or the transaction's end; returns the setting it
        /// replaced.
        mutating func lookUpByIndex() throws -> String {
            try flush()
            return try connection.query(SQLFile("diff/checks/by_index_on.sql"))[0].decode(String.self, "saved")
        }

        /// Queues restoring the setting `lookUpByIndex` replaced.
        mutating func queueRestoringSeqScan(_ saved: String) throws {
            queued += try SQLFile("diff/checks/by_index_off.sql").bound(["saved": saved], relations: [:])
                .map { ("checks/by_index_off.sql", $0.sql, $0.parameters) }
        }
    }
}
