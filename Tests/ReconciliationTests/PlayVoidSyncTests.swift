import AppStore
import AppStoreSimulator
import Foundation
import GooglePlay
import Logging
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// Google Play's voided-purchases list (SPEC section 18) against the simulator's Google Play and a
/// real PostgreSQL: paged, read over overlapping windows, each void applied once, a gap of more
/// than 30 days reported and repaired through the API, a voided order no upload held stored from
/// the API, a refusal stopping the run, and `reconcile notifications sync` reading it too.
@Suite("Google Play's voided purchases")
struct PlayVoidSyncTests {
    static let package = "com.hncs.szj.android"
    static let quiet = Logger(label: "job", factory: { _ in SwiftLogNoOpLogHandler() })
    static let day: TimeInterval = 86_400

    static func millis(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// A simulator playing Google Play and the job's settings for it over `database`.
    struct World {
        let sim: AppStoreSimulator
        let state: URL
        let settings: Settings
        let environment: [String: String]

        /// One read of the package's list at `now`, recorded under a lookup run of `connection`'s database.
        func sync(
            on connection: Connection, now: Date = Date(), pageSize: Int = 1000, batchSize: Int = 200
        ) async throws -> PlayVoidedSyncOutcome {
            let settings = settings
            return try await GooglePlayServices.withServices(settings: settings, logger: PlayVoidSyncTests.quiet) {
                services in
                var sync = PlayVoidSync(api: try #require(services?.api), services: try #require(services))
                sync.pageSize = pageSize
                sync.batchSize = batchSize
                let runID = try LookupRun().id(environment: settings.environment, on: connection)
                return try await sync.sync(
                    package: PlayVoidSyncTests.package, runID: runID, now: now, on: connection, logger: PlayVoidSyncTests.quiet)
            }
        }

        /// A purchase bought `bought`, for `account`.
        func buy(
            _ account: String, quantity: Int = 1, subscription: Bool = false, bought: Date = Date().addingTimeInterval(-2 * 86_400)
        ) throws -> CreatedPlayPurchase {
            try sim.play.createPurchase(.init(
                productId: subscription ? "vip_month" : "coin42", kind: subscription ? .subscription : .oneTime,
                quantity: quantity, obfuscatedAccountId: account, acknowledged: true,
                purchaseTimeMillis: PlayVoidSyncTests.millis(bought)))
        }
    }

    static func withWorld<T: Sendable>(
        _ database: TestDatabase, extra: [String: String] = [:], _ body: (World) async throws -> T
    ) async throws -> T {
        let state = Scratch.root.appendingPathComponent("sim-\(UUID().uuidString)")
        var logger = Logger(label: "sim")
        logger.logLevel = .critical
        let sim = try AppStoreSimulator(configuration: .init(stateDirectory: state, logger: logger, playPackageNames: [package]))
        return try await sim.withRunning { running in
            let play = try await running.playSettings()
            let environment = play.jobEnvironment.merging([
                "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
                "RECONCILE_REPORT_DIR": state.appendingPathComponent("reports").path,
                "RECONCILE_RECEIPT_VERIFICATION": "local", "RECONCILE_MAX_ATTEMPTS": "2",
            ].merging(extra) { $1 }) { $1 }
            let world = World(sim: sim, state: state, settings: try Settings(lookup: environment.lookup), environment: environment)
            return try await body(world)
        }
    }

    /// A white row as a verified upload of `purchase` leaves it.
    static func seedWhiteRow(
        _ purchase: CreatedPlayPurchase, account: String, quantity: Int = 1, subscription: Bool = false, bought: Date,
        on connection: Connection
    ) throws {
        let order = try #require(purchase.orderId)
        var record = AppleTransactionRecord(
            transactionID: order, originalTransactionID: PlayPurchaseData.originalOrderID(of: order),
            productID: purchase.productId, productType: subscription ? "auto_renewable" : nil, bundleID: package,
            environment: .production, quantity: quantity, purchaseDate: bought, signedDate: bought, source: .playPurchase)
        record.store = .googlePlay
        record.obfuscatedAccountID = account
        record.purchaseToken = purchase.purchaseToken
        record.acknowledged = true
        let runID = try LookupRun().id(environment: .production, on: connection)
        try connection.transaction { try TransactionStore.upsert([(record, nil)], runID: runID, on: connection) }
    }

    /// Every white row, every column a judgement reads (not when or by which run it was written).
    static func whiteTable(_ connection: Connection) throws -> [String] {
        try connection.query(
            """
            SELECT (transaction_id, original_transaction_id, product_id, product_type, bundle_id, environment, quantity,
                    purchase_date, revocation_date, revocation_reason, refunded_quantity, obfuscated_account_id,
                    purchase_token, acknowledged, pending, source, store)::text
              FROM reconcile.apple_transactions ORDER BY transaction_id
            """
        ).map { try $0.decode(String.self, at: 0) }
    }

    static func count(_ sql: String, on connection: Connection) throws -> Int {
        try connection.query(sql)[0].decode(Int.self, at: 0)
    }

    // MARK: - The list

    @Test func theListIsReadPageByPageAndEachVoidKeptOnce() async throws {
        let (database, connection) = try TestDatabase.migrated("play_void_pages")
        try await Self.withWorld(database) { world in
            for index in 0..<7 {
                let purchase = try world.buy("user\(index)")
                _ = try world.sim.play.voidPurchase(
                    purchase.purchaseToken, voidedReason: index == 3 ? 8 : 1,
                    voidedTimeMillis: Self.millis(Date().addingTimeInterval(-300 - Double(index) * 3600)))
            }
            let first = try await world.sync(on: connection, pageSize: 2)
            #expect(first.pages == 4)
            #expect(first.voidsRead == 7)
            #expect(first.voidsRecorded == 7)
            #expect(first.voidedUnacknowledged == 1)
            #expect(first.ordersStored == 7)
            #expect(first.unanswered == nil)
            let synced = try connection.query("SELECT synced_until FROM reconcile.play_voided_sync")[0].decode(Date.self, at: 0)
            #expect(abs(synced.timeIntervalSince(first.until)) < 0.001)
            // The first read asks the whole 30 days Google keeps.
            #expect(abs(
                first.until.timeIntervalSince(first.from)
                    - (30 * Self.day - PlayVoidSync.startMargin - PlayVoidSync.endMargin)) < 1)
            let second = try await world.sync(on: connection, now: Date().addingTimeInterval(1), pageSize: 2)
            #expect(second.voidsRead == 7)
            #expect(second.voidsRecorded == 0)
            #expect(second.voidedUnacknowledged == 0)
            #expect(abs(second.from.timeIntervalSince(first.until.addingTimeInterval(-PlayVoidSync.overlap))) < 0.001)
            #expect(try Self.count("SELECT count(*) FROM reconcile.play_voided_purchases", on: connection) == 7)
            #expect(try Self.count(
                "SELECT count(*) FROM reconcile.apple_transactions WHERE revocation_date IS NOT NULL", on: connection) == 7)
        }
    }

    /// Windows overlap: a void read again changes nothing, one listed late (Google's time earlier
    /// than the last read's end) is still read, and partial refunds add up by quantity.
    @Test func overlappingWindowsApplyEachVoidOnceAndPartialRefundsAddUp() async throws {
        let (database, connection) = try TestDatabase.migrated("play_void_overlap")
        try await Self.withWorld(database) { world in
            let bought = Date().addingTimeInterval(-3 * Self.day)
            let pack = try world.buy("alice", quantity: 5, bought: bought)
            try Self.seedWhiteRow(pack, account: "alice", quantity: 5, bought: bought, on: connection)
            _ = try world.sim.play.voidPurchase(
                pack.purchaseToken, voidedTimeMillis: Self.millis(Date().addingTimeInterval(-7200)), quantity: 1)
            let first = try await world.sync(on: connection)
            #expect(first.voidsRecorded == 1)
            #expect(first.ordersStored == 0)
            // Listed after the first read, though Google dates it an hour before that read ended.
            _ = try world.sim.play.voidPurchase(
                pack.purchaseToken, voidedTimeMillis: Self.millis(first.until.addingTimeInterval(-3600)), quantity: 2)
            let second = try await world.sync(on: connection, now: Date().addingTimeInterval(1))
            #expect(second.voidsRead == 2)
            #expect(second.voidsRecorded == 1)
            let third = try await world.sync(on: connection, now: Date().addingTimeInterval(2))
            #expect(third.voidsRecorded == 0)
            let row = try connection.query(
                "SELECT refunded_quantity, revocation_date IS NOT NULL, source FROM reconcile.apple_transactions WHERE transaction_id = $1",
                [try #require(pack.orderId)])[0]
            #expect(try row.decode(Int?.self, at: 0) == 3)
            #expect(try row.decode(Bool.self, at: 1))
            #expect(try row.decode(String.self, at: 2) == "play_voided")
            #expect(try Self.count("SELECT count(*) FROM reconcile.play_voided_purchases", on: connection) == 2)
        }
    }

    /// Google failing (5xx after the retries) leaves the watermark where it was; the next read
    /// asks the same span and misses nothing.
    @Test func aGoogleThatDoesNotAnswerLeavesTheWatermark() async throws {
        let (database, connection) = try TestDatabase.migrated("play_void_5xx")
        try await Self.withWorld(database) { world in
            let purchase = try world.buy("alice")
            _ = try world.sim.play.voidPurchase(
                purchase.purchaseToken, voidedTimeMillis: Self.millis(Date().addingTimeInterval(-300)))
            world.sim.state.faults = SimulatorFaults(play: PlaySimulatorFaults(http5xxShare: 1))
            let failed = try await world.sync(on: connection)
            #expect(failed.unanswered != nil)
            #expect(try Self.count("SELECT count(*) FROM reconcile.play_voided_sync", on: connection) == 0)
            world.sim.state.faults = .none
            let answered = try await world.sync(on: connection)
            #expect(answered.unanswered == nil)
            #expect(answered.voidsRecorded == 1)
            #expect(try Self.count("SELECT count(*) FROM reconcile.play_voided_sync", on: connection) == 1)
        }
    }

    // MARK: - Through a run

    /// A ledger credit of a voided order no upload holds: the run stores the order from the API
    /// (bound to its obfuscatedExternalAccountId), so it is a refunded_delivery, not an
    /// unverified_delivery; report.json counts the void.
    @Test func aVoidOfAnOrderNoUploadHoldsIsARefundedDelivery() async throws {
        let (database, connection) = try TestDatabase.migrated("play_void_unuploaded")
        try connection.executeScript(
            """
            INSERT INTO reconcile.products VALUES ('coin42', 'consumable', 6000, 'CNY');
            INSERT INTO reconcile.products VALUES ('vip_month', 'auto_renewable', 30000, 'CNY');
            """)
        try await Self.withWorld(database) { world in
            let bought = Date().addingTimeInterval(-2 * Self.day)
            let coins = try world.buy("alice", bought: bought)
            let vip = try world.buy("bob", subscription: true, bought: bought)
            let voided = Self.millis(Date().addingTimeInterval(-300))
            _ = try world.sim.play.voidPurchase(
                coins.purchaseToken, voidedReason: 8, voidedSource: 2, voidedTimeMillis: voided)
            _ = try world.sim.play.voidPurchase(vip.purchaseToken, voidedReason: 1, voidedTimeMillis: voided + 1)
            for (purchase, user, product) in [(coins, "alice", "coin42"), (vip, "bob", "vip_month")] {
                try connection.execute(
                    """
                    INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at)
                    VALUES ($1, $2, $3, 1, $4)
                    """, [try #require(purchase.orderId), user, product, bought])
            }
            let report = try await Stores.withJob(settings: world.settings, logger: Self.quiet) {
                try await $0.run(.init(since: bought.addingTimeInterval(-3600)))
            }
            #expect(try report.findings.map { "\($0.kind.rawValue) \($0.userID ?? "-")" }.sorted() == [
                "refunded_delivery alice", "refunded_delivery bob",
            ])
            #expect(report.play?.voidsRecorded == 2)
            #expect(report.play?.voidedUnacknowledged == 1)
            let rows = try connection.query(
                "SELECT transaction_id, source, obfuscated_account_id, product_type FROM reconcile.apple_transactions ORDER BY obfuscated_account_id"
            ).map { "\(try $0.decode(String.self, at: 1)) \(try $0.decode(String?.self, at: 2) ?? "-") \(try $0.decode(String?.self, at: 3) ?? "-")" }
            #expect(rows == ["play_voided alice -", "play_voided bob auto_renewable"])
            let json = try String(contentsOf: world.state.appendingPathComponent("reports/run-\(report.runID)/report.json"), encoding: .utf8)
            #expect(json.contains(#""voids_recorded": 2"#))
            #expect(json.contains(#""voided_unacknowledged": 1"#))
            #expect(json.contains(#""voided_gap": false"#))
        }
    }

    /// The hourly `notifications sync` reads a void for want of an acknowledgement before the
    /// nightly run does: the run's report still counts it (the job learnt of it since the last
    /// run), and the run after does not count it again.
    @Test func aVoidForWantOfAnAcknowledgementReadByTheSyncIsInTheNextRunsReport() async throws {
        let (database, connection) = try TestDatabase.migrated("play_void_sync_then_run")
        try connection.execute("INSERT INTO reconcile.products VALUES ('coin42', 'consumable', 6000, 'CNY')")
        try await Self.withWorld(database) { world in
            let bought = Date().addingTimeInterval(-4 * Self.day)
            let lapsed = try world.buy("alice", bought: bought)
            _ = try world.sim.play.voidPurchase(
                lapsed.purchaseToken, voidedReason: 8, voidedSource: 2,
                voidedTimeMillis: Self.millis(bought.addingTimeInterval(3 * Self.day)))
            let read = try await world.sync(on: connection)
            #expect(read.voidedUnacknowledged == 1)
            func run() async throws -> RunReport {
                try await Stores.withJob(settings: world.settings, logger: Self.quiet) {
                    try await $0.run(.init(since: bought.addingTimeInterval(-3600)))
                }
            }
            let first = try await run()
            #expect(first.play?.voidsRecorded == 0)
            #expect(first.play?.voidedUnacknowledged == 1)
            let second = try await run()
            #expect(second.play?.voidedUnacknowledged == 0)
        }
    }

    /// The last read more than 30 days ago: report.json says so, and the purchases bought in the
    /// gap are asked of productsv2 again, which tells of a refund the list no longer holds.
    @Test func aGapOfMoreThanThirtyDaysIsReportedAndRepairedThroughTheAPI() async throws {
        let (database, connection) = try TestDatabase.migrated("play_void_gap")
        try connection.executeScript(
            """
            INSERT INTO reconcile.products VALUES ('coin42', 'consumable', 6000, 'CNY'),
                ('vip_month', 'auto_renewable', 30000, 'CNY');
            """)
        try await Self.withWorld(database) { world in
            let bought = Date().addingTimeInterval(-35 * Self.day)
            let refunded = try world.buy("alice", bought: bought)
            let kept = try world.buy("bob", bought: bought)
            let partly = try world.buy("carol", quantity: 4, bought: bought)
            // A subscription renewed once, the renewal refunded: subscriptionsv2 does not say so,
            // the renewal's own order does.
            var request = PlayPurchaseRequest(
                productId: "vip_month", kind: .subscription, obfuscatedAccountId: "dave", acknowledged: true,
                purchaseTimeMillis: Self.millis(bought))
            request.expiryTimeMillis = Self.millis(bought.addingTimeInterval(Self.day))
            let subscribed = try world.sim.play.createPurchase(request)
            let renewed = try world.sim.play.renewSubscription(
                subscribed.purchaseToken, expiryTimeMillis: Self.millis(bought.addingTimeInterval(2 * Self.day)))
            // Voided 34 days ago: no longer in the list.
            _ = try world.sim.play.voidPurchase(refunded.purchaseToken, voidedTimeMillis: Self.millis(bought.addingTimeInterval(Self.day)))
            _ = try world.sim.play.voidPurchase(
                partly.purchaseToken, voidedTimeMillis: Self.millis(bought.addingTimeInterval(Self.day)), quantity: 3)
            _ = try world.sim.play.voidPurchase(
                renewed.purchaseToken, orderId: renewed.orderId,
                voidedTimeMillis: Self.millis(bought.addingTimeInterval(1.5 * Self.day)))
            for (purchase, user, quantity, product, at) in [
                (refunded, "alice", 1, "coin42", bought), (kept, "bob", 1, "coin42", bought),
                (partly, "carol", 4, "coin42", bought), (subscribed, "dave", 1, "vip_month", bought),
                (renewed, "dave", 1, "vip_month", bought.addingTimeInterval(Self.day)),
            ] {
                try Self.seedWhiteRow(
                    purchase, account: user, quantity: quantity, subscription: product == "vip_month", bought: at,
                    on: connection)
                try connection.execute(
                    """
                    INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at)
                    VALUES ($1, $2, $3, $4, $5)
                    """, [try #require(purchase.orderId), user, product, quantity, at])
            }
            try connection.execute(
                "INSERT INTO reconcile.play_voided_sync (package_name, synced_until) VALUES ($1, $2)",
                [Self.package, Date().addingTimeInterval(-40 * Self.day)])
            let report = try await Stores.withJob(settings: world.settings, logger: Self.quiet) {
                try await $0.run(.init(since: bought.addingTimeInterval(-3600)))
            }
            #expect(report.play?.voidedGap == true)
            #expect(report.play?.gapPurchasesAsked == 5)
            #expect(try report.findings.map { "\($0.kind.rawValue) \($0.transactionID ?? "-") \($0.userID ?? "-")" }.sorted() == [
                "refunded_delivery \(try #require(refunded.orderId)) alice",
                "refunded_delivery \(try #require(partly.orderId)) carol",
                "refunded_delivery \(try #require(renewed.orderId)) dave",
            ].sorted())
            let carol = try connection.query(
                "SELECT refunded_quantity FROM reconcile.apple_transactions WHERE transaction_id = $1", [try #require(partly.orderId)])
            #expect(try carol[0].decode(Int?.self, at: 0) == 3)
            let json = try String(contentsOf: world.state.appendingPathComponent("reports/run-\(report.runID)/report.json"), encoding: .utf8)
            #expect(json.contains(#""voided_gap": true"#))
            #expect(json.contains(#""gap_purchases_asked": 5"#))
            // The gap repaired, the watermark moved: the next read has no gap.
            let next = try await world.sync(on: connection)
            #expect(!next.gap)
            #expect(next.gapPurchasesAsked == 0)
        }
    }

    /// A gap's purchases are read a small batch at a time, each asked once, ties on the purchase
    /// date included; a revoked one is not asked again.
    @Test func aGapIsRepairedInBatches() async throws {
        let (database, connection) = try TestDatabase.migrated("play_void_gap_batches")
        try await Self.withWorld(database) { world in
            let bought = Date().addingTimeInterval(-33 * Self.day)
            var refunded: [String] = []
            for index in 0..<7 {
                // Three of them bought in the same millisecond.
                let at = index < 3 ? bought : bought.addingTimeInterval(Double(index) * 60)
                let purchase = try world.buy("user\(index)", bought: at)
                try Self.seedWhiteRow(purchase, account: "user\(index)", bought: at, on: connection)
                if index.isMultiple(of: 2) {
                    _ = try world.sim.play.voidPurchase(
                        purchase.purchaseToken, voidedTimeMillis: Self.millis(bought.addingTimeInterval(3600)))
                    refunded.append(try #require(purchase.orderId))
                }
            }
            try connection.execute(
                "INSERT INTO reconcile.play_voided_sync (package_name, synced_until) VALUES ($1, $2)",
                [Self.package, Date().addingTimeInterval(-31 * Self.day)])
            let repaired = try await world.sync(on: connection, batchSize: 2)
            #expect(repaired.gap)
            #expect(repaired.gapPurchasesAsked == 7)
            let revoked = try connection.query(
                "SELECT transaction_id FROM reconcile.apple_transactions WHERE revocation_date IS NOT NULL ORDER BY 1"
            ).map { try $0.decode(String.self, at: 0) }
            #expect(revoked == refunded.sorted())
            // Were the watermark put back, the revoked ones would not be asked again.
            try connection.execute(
                "UPDATE reconcile.play_voided_sync SET synced_until = $1", [Date().addingTimeInterval(-31 * Self.day)])
            let again = try await world.sync(on: connection, batchSize: 2)
            #expect(again.gapPurchasesAsked == 3)
        }
    }

    /// Google refusing the service account (401 permissionDenied) stops the run with a message
    /// saying so; the watermark does not move.
    @Test func aRefusalStopsTheRun() async throws {
        let (database, connection) = try TestDatabase.migrated("play_void_401")
        try await Self.withWorld(database) { world in
            world.sim.state.faults = SimulatorFaults(play: PlaySimulatorFaults(permissionDeniedShare: 1))
            let refusal = await #expect(throws: RunConfigurationError.self) {
                try await Stores.withJob(settings: world.settings, logger: Self.quiet) {
                    try await $0.run(.init(since: Date().addingTimeInterval(-Self.day)))
                }
            }
            let message = refusal.map(\.description) ?? ""
            #expect(message.contains("Google Play Developer API"), "\(message)")
            let watermarks = try Self.count("SELECT count(*) FROM reconcile.play_voided_sync", on: connection)
            #expect(watermarks == 0)
        }
    }

    /// `reconcile notifications sync` reads Play's list too (no Apple credentials needed), under
    /// a lookup run, and prints what it did.
    @Test func notificationsSyncReadsPlaysVoidedList() async throws {
        let (database, connection) = try TestDatabase.migrated("play_void_cli")
        try await Self.withWorld(database) { world in
            let purchase = try world.buy("alice")
            _ = try world.sim.play.voidPurchase(
                purchase.purchaseToken, voidedReason: 8, voidedTimeMillis: Self.millis(Date().addingTimeInterval(-300)))
            var environment = world.environment
            environment.removeValue(forKey: "RECONCILE_BUNDLE_IDS")
            let child = try ChildProcess(
                try ChildProcess.executable("reconcile"), arguments: ["notifications", "sync", "--log-level", "error"],
                environment: environment, logDirectory: world.state.appendingPathComponent("logs"), label: "sync")
            let status = try await child.waitForExit()
            let output = try String(contentsOf: child.standardOutputFile, encoding: .utf8)
            let errors = try String(contentsOf: child.standardErrorFile, encoding: .utf8)
            #expect(status == 0, "\(output)\n\(errors)")
            #expect(output.contains(
                "google play voided purchases (\(Self.package)): 1 read in 1 pages, 1 new (1 for want of an "
                    + "acknowledgement), 1 voided orders no upload held stored from the API"))
            #expect(try Self.count("SELECT count(*) FROM reconcile.play_voided_sync", on: connection) == 1)
            let kinds = try connection.query(
                "SELECT r.kind FROM reconcile.play_voided_purchases v JOIN reconcile.runs r ON r.id = v.first_seen_run"
            ).map { try $0.decode(String.self, at: 0) }
            #expect(kinds == ["lookup"])
            #expect(try Self.count(
                "SELECT count(*) FROM reconcile.apple_transactions WHERE revocation_date IS NOT NULL AND source = 'play_voided'",
                on: connection) == 1)
        }
    }

    // MARK: - Incremental equals whole

    /// Random purchases, full and partial voids (some listed late, dated before the last read),
    /// read by a chain of syncs at random times with random gaps under 30 days: the white table
    /// ends as one read at the end leaves it.
    @Test(arguments: [UInt64(38), 2026, 0xC0FFEE])
    func aChainOfSyncsEndsAsOneSyncAtTheEnd(seed: UInt64) async throws {
        let (chainDatabase, chain) = try TestDatabase.migrated("play_void_chain")
        let (_, once) = try TestDatabase.migrated("play_void_once")
        try await Self.withWorld(chainDatabase) { world in
            var random = SplitMix64(seed: seed)
            let end = Date()
            var time = end.addingTimeInterval(-27 * Self.day)
            struct Held {
                var purchase: CreatedPlayPurchase
                var refundable: Int
                var subscription: Bool
                var voided = false
            }
            var held: [Held] = []
            var syncs = 0
            for step in 0..<40 {
                time = time.addingTimeInterval(Double(Int.random(in: 1...15, using: &random)) * 3600)
                for _ in 0..<Int.random(in: 0...2, using: &random) {
                    let subscription = Int.random(in: 0..<5, using: &random) == 0
                    let quantity = subscription ? 1 : Int.random(in: 1...4, using: &random)
                    let bought = time.addingTimeInterval(-Double(Int.random(in: 0..<21_600, using: &random)))
                    let account = "user\(held.count)"
                    let purchase = try world.buy(account, quantity: quantity, subscription: subscription, bought: bought)
                    if Bool.random(using: &random) {
                        // An upload had verified it: both databases hold its white row.
                        for connection in [chain, once] {
                            try Self.seedWhiteRow(
                                purchase, account: account, quantity: quantity, subscription: subscription, bought: bought,
                                on: connection)
                        }
                    }
                    held.append(Held(purchase: purchase, refundable: quantity, subscription: subscription))
                }
                for _ in 0..<Int.random(in: 0...2, using: &random) {
                    let open = held.indices.filter { !held[$0].voided }
                    guard let index = open.randomElement(using: &random) else { break }
                    // Dated up to two days before now (so before earlier reads: listed late), each
                    // at a millisecond of its own.
                    let voidedAt = Self.millis(time) - Int64.random(in: 0..<172_800_000, using: &random) - Int64(step)
                    var quantity: Int?
                    if !held[index].subscription, held[index].refundable > 1, Bool.random(using: &random) {
                        quantity = Int.random(in: 1..<held[index].refundable, using: &random)
                    }
                    _ = try world.sim.play.voidPurchase(
                        held[index].purchase.purchaseToken, voidedReason: Int.random(in: 0...8, using: &random),
                        voidedSource: Int.random(in: 0...2, using: &random), voidedTimeMillis: voidedAt, quantity: quantity)
                    if let quantity {
                        held[index].refundable -= quantity
                    } else {
                        held[index].voided = true
                    }
                }
                if Int.random(in: 0..<5, using: &random) < 2 {
                    let outcome = try await world.sync(on: chain, now: time, pageSize: 3)
                    #expect(!outcome.gap)
                    #expect(outcome.unanswered == nil)
                    syncs += 1
                }
            }
            _ = try await world.sync(on: chain, now: end, pageSize: 3)
            _ = try await world.sync(on: once, now: end)
            #expect(syncs > 5)
            let whole = try Self.whiteTable(once)
            #expect(whole.count > 10)
            #expect(try Self.whiteTable(chain) == whole, "seed \(seed)")
            #expect(try Self.count("SELECT count(*) FROM reconcile.play_voided_purchases", on: chain)
                == Self.count("SELECT count(*) FROM reconcile.play_voided_purchases", on: once))
        }
    }
}
