import Foundation
import Logging
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// `reconcile insights` (SPEC section 19, issue 39 item 1): the segment arithmetic against hand
/// computations, a planted bad build found and nothing else, a clean world with nothing flagged,
/// counts that agree with the queue and the run's report, and the real binary's JSON.
@Suite("Insights: why orders leak")
struct InsightsTests {
    // MARK: The arithmetic

    /// Hand computation, z = 1.959964, z² = 3.841458881:
    /// - 8 of 10: p = 0.8; z²/2n = 0.192072944; p(1−p)/n = 0.016; z²/4n² = 0.009603647;
    ///   √(0.016 + 0.009603647) = 0.160011397, × z = 0.313616578;
    ///   (0.8 + 0.192072944 − 0.313616578) / (1 + 0.384145888) = 0.678456366 / 1.384145888 = 0.490162469.
    /// - 5 of 5: p = 1, so the root is z/2n and z·z/2n cancels z²/2n: 1 / (1 + z²/5) = 1 / 1.768291776
    ///   = 0.565517531.
    /// - 0 of 50: p = 0; z²/2n − z·√(z²/4n²) = z²/2n − z²/2n = 0.
    /// - 2 of 190: 0.002891458; 10 of 200: 0.027382645; 2 of 10: 0.056682151 (the same formula).
    @Test(arguments: [
        (8, 10, 0.490162469), (5, 5, 0.565517531), (0, 50, 0.0), (2, 190, 0.002891458), (10, 200, 0.027382645),
        (2, 10, 0.056682151),
    ])
    func theWilsonLowerBoundIsTheHandComputedOne(leaks: Int, purchases: Int, expected: Double) {
        let bound = LeakRate(purchases: purchases, leaks: leaks).lowerBound
        #expect(abs(bound - expected) < 1e-8, "\(leaks) of \(purchases): \(bound)")
        #expect(bound <= LeakRate(purchases: purchases, leaks: leaks).rate)
    }

    @Test func noPurchasesHaveNoRateAndNoBound() {
        #expect(LeakRate(purchases: 0, leaks: 0).rate == 0)
        #expect(LeakRate(purchases: 0, leaks: 0).lowerBound == 0)
    }

    /// The span's overall rate is 10 of 200 = 0.05, so the bar is 3 × 0.05 = 0.15.
    /// - 8 of 10: bound 0.490 > 0.15 and 8 ≥ 5 leaks: flagged.
    /// - 4 of 4: bound 4/(4 + z²) = 0.510 > 0.15 but 4 < 5 leaks: not flagged.
    /// - 5 of 5: bound 0.566 > 0.15 and 5 leaks: flagged (the minimum is inclusive).
    /// - 8 of 40: rate 0.2 is above the bar but its bound, 0.105, is not: not flagged.
    /// - 10 of 200 (the whole span): bound 0.027: not flagged.
    @Test(arguments: [(8, 10, true), (4, 4, false), (5, 5, true), (8, 40, false), (10, 200, false)])
    func aSegmentIsFlaggedWhenItsBoundBeatsThreeTimesTheOverallRateWithFiveLeaks(
        leaks: Int, purchases: Int, flagged: Bool
    ) {
        let overall = LeakRate(purchases: 200, leaks: 10)
        #expect(LeakRate(purchases: purchases, leaks: leaks).isFlagged(overall: overall) == flagged)
    }

    // MARK: Planted worlds, judged by a real run

    /// 200 purchases uploaded a day ago (ScriptedVerifier: coin42 at 6.000 CNY, bought a day ago),
    /// on three OS versions in turn; tx-000 … tx-009 from app 4.2.1, the rest from 4.2.0. Every
    /// purchase is credited except `missed`. Half the uploads spell the device keys as the SPEC
    /// does (app_version, os_version), half as the demo seed does (app, os).
    struct World {
        let database: TestDatabase
        let connection: Connection
        let settings: Settings
        let report: RunReport

        static let purchases = 200
        static func id(_ index: Int) -> String { "tx-" + String(format: "%03d", index) }

        init(_ name: String, missed: Set<Int>) async throws {
            let (database, connection) = try TestDatabase.migrated(name)
            self.database = database
            self.connection = connection
            let ids = (0..<Self.purchases).map(Self.id)
            try ScriptedVerifier.upload(ids, on: connection)
            for (index, id) in ids.enumerated() {
                let app = index < 10 ? "4.2.1" : "4.2.0"
                let os = ["17.5", "18.1", "18.2"][index % 3]
                let device = index % 2 == 0
                    ? #"{"model": "iPhone15,2", "app_version": "\#(app)", "os_version": "\#(os)"}"#
                    : #"{"model": "iPhone15,2", "app": "\#(app)", "os": "\#(os)"}"#
                try connection.execute(
                    "UPDATE reconcile.receipt_uploads SET device = $1::jsonb WHERE claimed_transaction_id = $2",
                    [device, id])
                if !missed.contains(index) {
                    try connection.plantDelivery(id, to: "user-\(index)", product: "coin42", age: "1 day")
                }
            }
            let reports = Scratch.root.appendingPathComponent("insights-\(UUID().uuidString)")
            settings = try Settings(lookup: [
                "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj", "RECONCILE_REPORT_DIR": reports.path,
            ].lookup)
            let job = ReconciliationJob(
                settings: settings, verifier: ScriptedVerifier(), logger: Logger(label: "test"), batchSize: 50)
            report = try await job.run(.init(since: Date().addingTimeInterval(-7 * 86_400)))
        }

        func insights(_ dimensions: [InsightDimension] = InsightDimension.allCases) throws -> Insights {
            try Insights.compute(
                InsightsQuery(since: Date().addingTimeInterval(-7 * 86_400), until: Date(), dimensions: dimensions),
                settings: settings, on: connection)
        }
    }

    /// The bad build drops 8 of its 10 purchases; 2 of the good build's 190 are missed too.
    static let badBuild: Set<Int> = [0, 1, 2, 3, 4, 5, 6, 7, 50, 150]

    @Test func aBuildThatDropsItsPurchasesIsTheOneSegmentFlagged() async throws {
        let world = try await World("insights_bad_build", missed: Self.badBuild)
        let insights = try world.insights()
        #expect(insights.overall == LeakRate(purchases: 200, leaks: 10))
        let flagged = insights.tables.flatMap { table in
            table.segments.filter(\.flagged).map { "\(table.dimension.rawValue)=\($0.value)" }
        }
        #expect(flagged == ["app_version=4.2.1"])

        let apps = try #require(insights.tables.first { $0.dimension == .appVersion })
        #expect(apps.segments.map(\.value) == ["4.2.1", "4.2.0"], "flagged first")
        let bad = apps.segments[0]
        #expect(bad.leakRate == LeakRate(purchases: 10, leaks: 8))
        #expect(bad.counts == [.missedDelivery: 8])
        #expect(bad.valueAtRisk == [RunReport.ValueAtRisk(kind: .missedDelivery, currency: "CNY", amountMilli: 48_000)])
        #expect(apps.segments[1].leakRate == LeakRate(purchases: 190, leaks: 2))

        // Both spellings of the keys are read: no purchase is of an unknown version.
        let oses = try #require(insights.tables.first { $0.dimension == .osVersion })
        #expect(Set(oses.segments.map(\.value)) == ["17.5", "18.1", "18.2"])
        #expect(oses.segments.map(\.purchases).reduce(0, +) == 200)
        let models = try #require(insights.tables.first { $0.dimension == .deviceModel })
        #expect(models.segments.map(\.value) == ["iPhone15,2"])
        #expect(insights.tables.map(\.dimension) == InsightDimension.allCases)
        for table in insights.tables {
            #expect(table.segments.map(\.purchases).reduce(0, +) == 200, "\(table.dimension)")
            #expect(table.segments.map(\.leaks).reduce(0, +) == 10, "\(table.dimension)")
        }
        let products = try #require(insights.tables.first { $0.dimension == .product })
        #expect(products.segments.map(\.value) == ["coin42"])
        let stores = try #require(insights.tables.first { $0.dimension == .store })
        #expect(stores.segments.map(\.value) == ["app_store"])
    }

    /// The alert rule `flagged_segment` (SPEC section 19) sees the same flag through the run: the
    /// first run with alerts on queues the newly flagged build, the next run, with nothing new, none.
    @Test func aNewlyFlaggedSegmentIsAlertedOnceThroughTheRun() async throws {
        let world = try await World("insights_alert", missed: Self.badBuild)
        #expect(try RunAlerts.flagged(until: Date(), settings: world.settings, on: world.connection).map(\.name)
            == ["app_version=4.2.1"])
        let settings = try Settings(lookup: [
            "DATABASE_URL": world.database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
            "RECONCILE_REPORT_DIR": Scratch.folder("insights-alert").path,
            "RECONCILE_ALERT_WEBHOOK_URL": "http://127.0.0.1:9/unused", "RECONCILE_ALERT_FORMAT": "json",
        ].lookup)
        func run() async throws -> RunReport {
            try await ReconciliationJob(
                settings: settings, verifier: ScriptedVerifier(), logger: Logger(label: "test"), batchSize: 50
            ).run(.init(since: Date().addingTimeInterval(-7 * 86_400)))
        }
        let second = try await run()
        let queued = try world.connection.query(
            "SELECT run_id, message::text FROM reconcile.alerts ORDER BY id")
        #expect(queued.count == 1)
        #expect(try queued.first?.decode(Int64.self, at: 0) == second.runID)
        let message = try JSONDecoder().decode(AlertMessage.self, from: Data(try #require(queued.first).decode(String.self, at: 1).utf8))
        #expect(message.fired.map(\.rule) == [.flaggedSegment])
        #expect(message.fired.first?.segments == ["app_version=4.2.1"])
        // The counts, the value at risk and the top flagged segment close every run's message.
        #expect(message.summary?.topSegment == RunAlerts.FlaggedSegment(name: "app_version=4.2.1", leaks: 8, purchases: 10))
        #expect(message.summary?.openItems == second.openFindings)
        #expect(message.lines.last == "Top flagged segment: app_version=4.2.1, 8 of its 10 purchases leaked")
        _ = try await run()
        #expect(try world.connection.query("SELECT count(*)::int FROM reconcile.alerts")[0].decode(Int.self, at: 0) == 1)
        #expect(try world.connection.query("SELECT count(*)::int FROM reconcile.alert_checks")[0].decode(Int.self, at: 0) == 2)
    }

    /// The flagged segments are an Insights computation over 30 days: a check reads them only when
    /// the `flagged_segment` rule watches them or a message goes out (it names the top one).
    @Test func theFlaggedSegmentsAreReadOnlyWhenARuleOrAMessageNeedsThem() async throws {
        let world = try await World("insights_alert_lazy", missed: Self.badBuild)
        var reads = 0
        func check(_ rules: AlertRules) throws -> AlertMessage? {
            // Each check as the run's first.
            try world.connection.executeScript("DELETE FROM reconcile.alerts; DELETE FROM reconcile.alert_checks;")
            let id = try RunAlerts.check(world.report, rules: rules, settings: world.settings, on: world.connection) {
                reads += 1
                return try RunAlerts.flagged(until: Date(), settings: world.settings, on: world.connection)
            }
            guard let id else { return nil }
            let row = try world.connection.query("SELECT message::text FROM reconcile.alerts WHERE id = $1", [id])
            return try JSONDecoder().decode(AlertMessage.self, from: Data(try row[0].decode(String.self, at: 0).utf8))
        }
        // No rule watches them and nothing fires: not read.
        #expect(try check(AlertRules(undeliveredNotifications: 1)) == nil)
        #expect(reads == 0)
        // The rule watches them: read, and it fires.
        #expect(try check(AlertRules(flaggedSegment: true))?.fired.map(\.rule) == [.flaggedSegment])
        #expect(reads == 1)
        // Another rule fires (the run's new high findings): read once, for the message's top segment.
        let message = try check(AlertRules(newHighFindings: 1))
        #expect(message?.fired.map(\.rule) == [.newHighFindings])
        #expect(message?.summary?.topSegment?.name == "app_version=4.2.1")
        #expect(reads == 2)
    }

    /// A segment's items (the queue's segment filter): exactly the counted items of its purchases.
    @Test func aSegmentsItemsAreTheItemsItCounts() async throws {
        let world = try await World("insights_segment_items", missed: Self.badBuild)
        let span = InsightsQuery(since: Date().addingTimeInterval(-7 * 86_400), until: Date())
        let items = try Insights.items(of: .appVersion, value: "4.2.1", span, settings: world.settings, on: world.connection)
        let expected = try world.connection.query(
            "SELECT id FROM reconcile.review_items WHERE transaction_id = ANY($1::text[]) ORDER BY id",
            [(0..<8).map(World.id)]).map { try $0.decode(Int64.self, at: 0) }
        #expect(items.sorted() == expected && expected.count == 8)
        #expect(try Insights.items(of: .appVersion, value: "9.9.9", span, settings: world.settings, on: world.connection).isEmpty)
        let hour = try Insights.items(of: .product, value: "coin42", span, settings: world.settings, on: world.connection)
        #expect(hour.count == 10)
    }

    /// The same purchases with a few misses spread over both builds: nothing stands out.
    @Test func aCleanWorldFlagsNothing() async throws {
        let world = try await World("insights_clean", missed: [3, 60, 120, 190])
        let insights = try world.insights()
        #expect(insights.overall == LeakRate(purchases: 200, leaks: 4))
        #expect(insights.tables.allSatisfy { $0.segments.allSatisfy { !$0.flagged } })
        #expect(insights.tables.count == InsightDimension.allCases.count)
    }

    /// The issue's rule: the insights' counts agree with the queue's open items and the run's
    /// report for the same span; a dismissed item stops counting, a resolved one does not.
    @Test func theCountsAgreeWithTheQueueAndTheReport() async throws {
        let world = try await World("insights_agree", missed: Self.badBuild)
        let insights = try world.insights([.store])
        let table = try #require(insights.tables.first)
        var counts: [FindingKind: Int] = [:]
        for segment in table.segments { counts.merge(segment.counts, uniquingKeysWith: +) }

        var reported: [FindingKind: Int] = [:]
        for finding in try world.report.findings { reported[finding.kind, default: 0] += 1 }
        #expect(counts == reported)
        #expect(insights.overall.leaks == reported.filter { $0.key.isLeak }.values.reduce(0, +))

        let queue = try world.connection.query(
            """
            SELECT kind, count(*) FROM reconcile.review_items
             WHERE status IN ('open', 'in_review', 'awaiting_approval') GROUP BY kind
            """)
        let open = Dictionary(uniqueKeysWithValues: try queue.map {
            (try #require(FindingKind(rawValue: try $0.decode(String.self, at: 0))), try $0.decode(Int.self, at: 1))
        })
        #expect(counts == open)
        #expect(counts == [.missedDelivery: 10])

        let ids = try world.connection.query(
            "SELECT id FROM reconcile.review_items WHERE transaction_id IN ('tx-000', 'tx-001') ORDER BY transaction_id"
        ).map { try $0.decode(Int64.self, at: 0) }
        #expect(ids.count == 2)
        let service = ReviewDecisions(connection: world.connection, approval: .none, judgement: .asStored)
        _ = try service.dismiss(id: ids[0], by: "tester", note: "a test purchase")
        _ = try service.resolve(id: ids[1], resolution: .noAction, by: "tester", note: "refunded by hand")
        let after = try world.insights([.appVersion])
        #expect(after.overall == LeakRate(purchases: 200, leaks: 9))
        #expect(after.tables.first?.segments.first { $0.value == "4.2.1" }?.leakRate == LeakRate(purchases: 10, leaks: 7))
    }

    /// The upload delay's buckets, a device JSON that is absent, empty, not an object or without the
    /// key (all `unknown`), a purchase no upload carried (`never_uploaded`), and the upload that
    /// first carried a purchase deciding its device (a Server API history listing is no upload).
    /// The uploads are moved after the run: the insights read them as they are.
    @Test func theFirstUploadDecidesTheDeviceAndTheDelay() async throws {
        let world = try await World("insights_buckets", missed: [])
        let c = world.connection
        func moveUpload(_ id: String, by interval: String) throws {
            try c.execute(
                """
                UPDATE reconcile.receipt_uploads u SET uploaded_at = a.purchase_date + $2::interval
                  FROM reconcile.apple_transactions a
                 WHERE a.transaction_id = $1 AND u.claimed_transaction_id = $1
                """, [id, interval])
        }
        try moveUpload("tx-000", by: "30 seconds")
        try moveUpload("tx-001", by: "10 minutes")
        try moveUpload("tx-002", by: "5 hours")
        try moveUpload("tx-003", by: "3 days")
        try c.execute("DELETE FROM reconcile.transaction_claims WHERE transaction_id = 'tx-004'")
        for (id, device) in [("tx-005", nil), ("tx-006", #""just text""#), ("tx-007", #"{"app_version": "", "os": "18.1"}"#)] {
            try c.execute(
                "UPDATE reconcile.receipt_uploads SET device = $2::jsonb WHERE claimed_transaction_id = $1", [id, device])
        }
        // tx-010 was also uploaded from build 9.9.9 a minute before it was bought (a clock off),
        // and a history listed it for an upload from build 8.8.8 earlier still.
        for (app, source, minutes) in [("9.9.9", "jws", 1), ("8.8.8", "server_api", 5)] {
            try c.execute(
                """
                WITH upload AS (
                    INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at, device)
                    SELECT 'user-10', 'signed_transaction', 'again', 'tx-010', a.purchase_date - make_interval(mins => $3),
                           jsonb_build_object('app_version', $1::text)
                      FROM reconcile.apple_transactions a WHERE a.transaction_id = 'tx-010'
                    RETURNING id
                )
                INSERT INTO reconcile.transaction_claims (transaction_id, upload_id, user_id, source)
                SELECT 'tx-010', id, 'user-10', $2 FROM upload
                """, [app, source, minutes])
        }

        let insights = try world.insights()
        func segments(_ dimension: InsightDimension) throws -> [String: Int] {
            let table = try #require(insights.tables.first { $0.dimension == dimension })
            return Dictionary(uniqueKeysWithValues: table.segments.map { ($0.value, $0.purchases) })
        }
        #expect(try segments(.uploadDelay) == [
            "under_1_minute": 196, "under_1_hour": 1, "under_1_day": 1, "later": 1, "never_uploaded": 1,
        ])
        #expect(try segments(.appVersion) == ["4.2.1": 6, "4.2.0": 189, "9.9.9": 1, "unknown": 4])
        // tx-007's os spelled the codebase's way still counts; tx-010's first upload has no OS.
        #expect(try segments(.osVersion)["unknown"] == 4)
        #expect(try segments(.deviceModel) == ["iPhone15,2": 195, "unknown": 5])

        let hours = try c.query("SELECT purchase_date FROM reconcile.apple_transactions").map {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            return String(format: "%02d", calendar.component(.hour, from: try $0.decode(Date.self, at: 0)))
        }
        #expect(try segments(.purchaseHour) == Dictionary(hours.map { ($0, 1) }, uniquingKeysWith: +))
    }

    /// Before any nightly run finished nothing is judged, even a purchase already in the white
    /// table with an open item (a desk lookup's): the span says so and has no segments.
    @Test func beforeAnyRunFinishedNothingIsJudged() async throws {
        let (database, connection) = try TestDatabase.migrated("insights_no_run")
        try connection.executeScript(
            """
            INSERT INTO reconcile.runs (status, window_since, window_until, environment, started_at, finished_at, kind)
            VALUES ('completed', now() - interval '3 days', now(), 'production', now(), now(), 'lookup'),
                   ('running', now() - interval '3 days', now(), 'production', now(), NULL, 'run');
            INSERT INTO reconcile.apple_transactions (transaction_id, original_transaction_id, product_id, product_type,
                bundle_id, environment, purchase_date, source)
            VALUES ('tx-1', 'tx-1', 'coin42', 'consumable', 'com.hncs.szj', 'Production', now() - interval '2 days', 'jws');
            """)
        let settings = try Settings(lookup: ["DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj"].lookup)
        let insights = try Insights.compute(InsightsQuery(until: Date()), settings: settings, on: connection)
        #expect(insights.span.runID == nil && insights.span.judgedBefore == nil)
        #expect(insights.overall == LeakRate(purchases: 0, leaks: 0))
        #expect(insights.tables.count == InsightDimension.allCases.count)
        #expect(insights.tables.allSatisfy { $0.segments.isEmpty })
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(insights.json(single: false).utf8)) as? [[String: Any]])
        #expect(json.allSatisfy { ($0["span"] as? [String: Any])?["run_id"] is NSNull })
    }

    /// A span that starts after every purchase judges none; one that ends before them, too.
    @Test func aSpanWithoutPurchasesHasNoSegments() async throws {
        let world = try await World("insights_empty_span", missed: [1])
        let later = try Insights.compute(
            InsightsQuery(since: Date().addingTimeInterval(-3_600), until: Date()), settings: world.settings,
            on: world.connection)
        #expect(later.overall == LeakRate(purchases: 0, leaks: 0))
        #expect(later.tables.allSatisfy { $0.segments.isEmpty })
        let onlyPlay = try Insights.compute(
            InsightsQuery(until: Date(), store: .googlePlay, dimensions: [.store]), settings: world.settings,
            on: world.connection)
        #expect(onlyPlay.tables.first?.segments.isEmpty == true)
        #expect(onlyPlay.span.runID == world.report.runID)
    }

    /// Google Play's purchases through the job as `reconcile run` builds it (`Stores.withJob`,
    /// signatures checked under the package's licence key): an OS version on which 6 of 8
    /// purchases were never credited is flagged (6/8: bound 0.409 > 3 × 7/60 = 0.35), and the
    /// store filter keeps Play's purchases or none.
    @Test func aBadOSVersionOnGooglePlayIsFlaggedAndTheStoreFilters() async throws {
        let (database, connection) = try TestDatabase.migrated("insights_play")
        let key = PlayUploadScenarioTests.LicenceKey()
        let bought = Date().addingTimeInterval(-2 * 86_400)
        let missed: Set<Int> = [0, 1, 2, 3, 4, 5, 30]
        for index in 0..<60 {
            let order = "GPA.2000-0000-0000-" + String(format: "%05d", index)
            let data = PlayUploadScenarioTests.purchaseData(
                order: order, token: "tok-\(index)", account: "player-\(index)", bought: bought)
            let os = index < 8 ? "Android 14" : index % 2 == 0 ? "Android 15" : "Android 13"
            try connection.execute(
                """
                INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at, device)
                VALUES ($1, 'play_purchase', $2, $3, $4, $5::jsonb)
                """,
                ["player-\(index)", try key.payload(data), order, bought.addingTimeInterval(20),
                 #"{"model": "Pixel 8", "os": "\#(os)", "app": "4.2.0"}"#])
            if !missed.contains(index) {
                try connection.plantDelivery(order, to: "player-\(index)", product: "coin42", age: "1 day")
            }
        }
        let settings = try Settings(lookup: [
            "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
            "GOOGLE_PLAY_PACKAGE_NAMES": PlayUploadScenarioTests.package, "GOOGLE_PLAY_LICENSE_KEYS": key.setting,
            "RECONCILE_REPORT_DIR": Scratch.root.appendingPathComponent("insights-play-\(UUID().uuidString)").path,
            "RECONCILE_RECEIPT_VERIFICATION": "local",
        ].lookup)
        let report = try await Stores.withJob(settings: settings, logger: PlayUploadScenarioTests.quiet) {
            try await $0.run(.init(since: bought.addingTimeInterval(-3600)))
        }
        #expect(try report.findings.filter { $0.kind == .missedDelivery }.count == 7)

        let insights = try Insights.compute(InsightsQuery(until: Date()), settings: settings, on: connection)
        #expect(insights.overall == LeakRate(purchases: 60, leaks: 7))
        let flagged = insights.tables.flatMap { table in
            table.segments.filter(\.flagged).map { "\(table.dimension.rawValue)=\($0.value)" }
        }
        #expect(flagged == ["os_version=Android 14"])
        let stores = try #require(insights.tables.first { $0.dimension == .store })
        #expect(stores.segments.map(\.value) == ["google_play"])
        let delays = try #require(insights.tables.first { $0.dimension == .uploadDelay })
        #expect(delays.segments.map(\.value) == ["under_1_minute"])

        let apple = try Insights.compute(
            InsightsQuery(until: Date(), store: .appStore, dimensions: [.osVersion]), settings: settings, on: connection)
        #expect(apple.overall == LeakRate(purchases: 0, leaks: 0))
        let play = try Insights.compute(
            InsightsQuery(until: Date(), store: .googlePlay, dimensions: [.osVersion]), settings: settings, on: connection)
        #expect(play.tables.first?.segments.first?.value == "Android 14")
        #expect(play.tables.first?.segments.first?.leakRate == LeakRate(purchases: 8, leaks: 6))
    }

    // MARK: The real binary

    static func reconcile(_ arguments: [String], database: TestDatabase, label: String) async throws
        -> (status: Int32, out: String, err: String)
    {
        let logs = Scratch.root.appendingPathComponent("insights-cli-\(UUID().uuidString)")
        let child = try ChildProcess(
            try ChildProcess.executable("reconcile"), arguments: arguments + ["--log-level", "error"],
            environment: ["DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj"], logDirectory: logs,
            label: label)
        let status = try await child.waitForExit()
        return (status, child.standardOutput, child.standardError)
    }

    @Test func theCommandPrintsSection19sJSONAndATable() async throws {
        let world = try await World("insights_cli", missed: Self.badBuild)

        let one = try await Self.reconcile(
            ["insights", "--since", "7d", "--by", "app_version", "--json"], database: world.database, label: "one")
        #expect(one.status == 0, "\(one.err)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(one.out.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["span", "overall", "by", "segments"])
        #expect(object["by"] as? String == "app_version")
        let span = try #require(object["span"] as? [String: Any])
        #expect(Set(span.keys) == ["since", "until", "store", "run_id", "judged_before"])
        #expect((span["run_id"] as? NSNumber)?.int64Value == world.report.runID)
        #expect(span["store"] is NSNull)
        let overall = try #require(object["overall"] as? [String: Any])
        #expect(overall["purchases"] as? Int == 200 && overall["leaks"] as? Int == 10)
        #expect(overall["rate"] as? Double == 0.05)
        let segments = try #require(object["segments"] as? [[String: Any]])
        #expect(segments.map { $0["value"] as? String } == ["4.2.1", "4.2.0"])
        let bad = segments[0]
        #expect(Set(bad.keys) == ["value", "purchases", "leaks", "rate", "rate_low", "flagged", "counts", "value_at_risk"])
        #expect(bad["flagged"] as? Bool == true && segments[1]["flagged"] as? Bool == false)
        #expect(bad["purchases"] as? Int == 10 && bad["leaks"] as? Int == 8 && bad["rate"] as? Double == 0.8)
        #expect(abs((bad["rate_low"] as? Double ?? 0) - 0.490162469) < 1e-8)
        let counts = try #require(bad["counts"] as? [String: Int])
        #expect(counts.count == FindingKind.allCases.count && counts["missed_delivery"] == 8 && counts["wrong_account"] == 0)
        let risk = try #require(bad["value_at_risk"] as? [[String: Any]])
        #expect(risk.count == 1 && risk[0]["kind"] as? String == "missed_delivery" && risk[0]["currency"] as? String == "CNY"
            && risk[0]["amount_milli"] as? Int == 48_000)

        let every = try await Self.reconcile(["insights", "--json"], database: world.database, label: "every")
        #expect(every.status == 0, "\(every.err)")
        let array = try #require(try JSONSerialization.jsonObject(with: Data(every.out.utf8)) as? [[String: Any]])
        #expect(array.map { $0["by"] as? String } == InsightDimension.allCases.map(\.rawValue))
        #expect(array.allSatisfy { Set($0.keys) == ["span", "overall", "by", "segments"] })
        let delays = try #require(array.first { $0["by"] as? String == "upload_delay" }?["segments"] as? [[String: Any]])
        #expect(delays.allSatisfy { UploadDelay(rawValue: $0["value"] as? String ?? "") != nil }, "\(delays)")

        let table = try await Self.reconcile(["insights", "--since", "7d"], database: world.database, label: "table")
        #expect(table.status == 0, "\(table.err)")
        #expect(table.out.contains("1 segment FLAGGED"), "\(table.out)")
        let badLine = try #require(table.out.split(separator: "\n").first { $0.contains("4.2.1") })
        #expect(badLine.contains("FLAGGED") && badLine.contains("80.0 %") && badLine.contains("48.00 CNY"), "\(badLine)")
        #expect(table.out.contains("by purchase to first upload:"))

        let unknown = try await Self.reconcile(["insights", "--by", "country"], database: world.database, label: "unknown")
        #expect(unknown.status == 64)
        for dimension in InsightDimension.allCases {
            #expect(unknown.err.contains(dimension.rawValue), "\(unknown.err)")
        }
        let badSince = try await Self.reconcile(["insights", "--since", "yesterday"], database: world.database, label: "since")
        #expect(badSince.status == 64 && badSince.err.contains("--since yesterday"), "\(badSince.err)")
    }
}
