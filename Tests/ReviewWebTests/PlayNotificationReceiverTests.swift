import AppStoreSimulator
import AsyncHTTPClient
import Crypto
import Foundation
import Glibc
import Logging
import NIOCore
import Postgres
@testable import Reconciliation
@testable import ReviewWeb
import TestSupport
import Testing

/// Google Play's real-time developer notifications on `reconcile notifications receive` (SPEC
/// section 18, issue 38): Cloud Pub/Sub's push requests over real HTTP (the simulator's Google Play
/// pushing them, or the test posting Google's envelope shapes itself) into a real PostgreSQL; the
/// worker asks the simulator's Developer API about each purchase token and judges what Google says.
/// The worker's passes are driven by the test, one at a time.
@Suite("Play notifications on the receiver")
struct PlayNotificationReceiverTests {
    static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
    static let package = "com.hncs.szj.android"
    static let pushToken = "3f9c1d2e7a6b5c4d8e9f0a1b2c3d4e5f"

    /// A database, a simulator playing Google Play, and the product catalogue.
    struct World: @unchecked Sendable {
        let database: TestDatabase
        let connection: Connection
        let sim: AppStoreSimulator
        let state: URL

        init(_ name: String) throws {
            (database, connection) = try TestDatabase.migrated(name)
            try connection.executeScript("INSERT INTO reconcile.products VALUES ('coin42', 'consumable', 6000, 'CNY');")
            state = Scratch.root.appendingPathComponent("sim-\(UUID().uuidString)")
            var logger = Logger(label: "sim")
            logger.logLevel = .critical
            sim = try AppStoreSimulator(configuration: .init(
                stateDirectory: state, logger: logger, playPackageNames: [PlayNotificationReceiverTests.package]))
        }

        /// The receiver's settings with the simulator as Google Play (and its service account
        /// unless `serviceAccount` is false).
        func settings(_ running: RunningSimulator, serviceAccount: Bool = true, grace: TimeInterval = 2) async throws
            -> Settings
        {
            var environment = try await running.playSettings().jobEnvironment.merging([
                "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
                "RECONCILE_REPORT_DIR": state.appendingPathComponent("reports").path,
                "RECONCILE_PLAY_PUSH_TOKEN": PlayNotificationReceiverTests.pushToken,
            ]) { $1 }
            if !serviceAccount { environment["GOOGLE_PLAY_SERVICE_ACCOUNT_FILE"] = nil }
            let lookup = environment
            var settings = try Settings(lookup: { lookup[$0] })
            settings.grace = grace
            return settings
        }

        /// A one-time purchase of `coin42` by the account `alice`.
        func purchase(boughtAgo: TimeInterval = 2 * 86_400) throws -> CreatedPlayPurchase {
            try sim.play.createPurchase(.init(
                productId: "coin42", obfuscatedAccountId: "alice", acknowledged: true,
                purchaseTimeMillis: Int64(Date().addingTimeInterval(-boughtAgo).timeIntervalSince1970 * 1000)))
        }

        /// The ledger credits `user` with `order`.
        func credit(_ order: String, to user: String = "alice") throws {
            try connection.execute(
                """
                INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at)
                VALUES ($1, $2, 'coin42', 1, now() - interval '2 days')
                """, [order, user])
        }

        /// The review queue as `kind transaction user status`, sorted.
        func items() throws -> [String] {
            try connection.query(
                "SELECT kind || ' ' || transaction_id || ' ' || coalesce(user_id, '-') || ' ' || status FROM reconcile.review_items ORDER BY 1"
            ).map { try $0.decode(String.self, at: 0) }
        }

        /// The stored notifications as `kind state`, by id.
        func notifications() throws -> [String] {
            try connection.query("SELECT kind || ' ' || state FROM reconcile.play_notifications ORDER BY id")
                .map { try $0.decode(String.self, at: 0) }
        }

        func count(_ table: String) throws -> Int {
            try connection.query("SELECT count(*)::int FROM reconcile.\(table)")[0].decode(Int.self, at: 0)
        }
    }

    /// The receiver as the command wires it, Apple's path refusing everything (not under test),
    /// listening on a free port for the time of `body`; the worker is the test's to drive.
    static func withReceiver<T: Sendable>(
        _ settings: Settings, playTiming: PlayNotificationWorker.Timing = .init(),
        _ body: @escaping @Sendable (_ url: String, _ worker: ReceiverWorker, _ counters: ReceiverCounters) async throws -> T
    ) async throws -> T {
        try await GooglePlayServices.withServices(settings: settings, logger: quiet) { services in
            let counters = ReceiverCounters()
            let refuse: @Sendable (String) async -> NotificationVerdict = { _ in .invalid(reason: "not under test") }
            let worker = ReceiverWorker(
                settings: settings, applier: NotificationApplier(verify: refuse), answerer: nil, forwarder: nil,
                counters: counters,
                play: PlayNotificationWorker(services: services, settings: settings, timing: playTiming, logger: quiet),
                logger: quiet)
            var configuration = NotificationReceiverConfiguration(
                host: "127.0.0.1", port: 0, path: "/apple/notifications", databaseURL: settings.databaseURL,
                logger: quiet)
            configuration.playPath = "/google/rtdn"
            configuration.counters = counters
            let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
            let application = buildNotificationReceiver(
                configuration: configuration, receiver: NotificationReceiver(forwarding: false, verify: refuse),
                play: services.map { PlayNotificationReceiver(pushToken: $0.settings.pushToken) }
            ) {
                portSink.yield($0)
                portSink.finish()
            }
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask {
                    defer { portSink.finish() }
                    try await application.run()
                    return nil
                }
                defer { group.cancelAll() }
                var iterator = ports.makeAsyncIterator()
                guard let port = await iterator.next() else { throw TestSetupError("the receiver did not start") }
                return try await body("http://127.0.0.1:\(port)/google/rtdn", worker, counters)
            }
        }
    }

    /// POSTs `body` to `url` (with `?token=` when given); the status.
    static func post(_ body: String, to url: String, token: String? = pushToken) async throws -> Int {
        var request = HTTPClientRequest(url: url + (token.map { "?token=\($0)" } ?? ""))
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
        return Int(response.status.code)
    }

    /// A push envelope as Pub/Sub sends one, with `data` as given (base64 or not) and the message id
    /// spelled `messageId`, `message_id` or both.
    static func envelope(id: String, data: String, spelling: [String] = ["messageId", "message_id"]) -> String {
        let ids = spelling.map { #""\#($0)":"\#(id)""# }.joined(separator: ",")
        return #"{"message":{"attributes":{},"data":"\#(data)",\#(ids),"publishTime":"2026-12-02T10:00:00.123Z"},"subscription":"projects/p/subscriptions/play-rtdn"}"#
    }

    static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
    static func sha256(_ bytes: some Collection<UInt8>) -> String {
        SHA256.hash(data: Array(bytes)).map { String(format: "%02x", $0) }.joined()
    }
    static func sha256(_ text: String) -> String { sha256(Array(text.utf8)) }

    /// Garbage is read as a push too (stored raw, answered 204): bytes that are not UTF-8 or hold
    /// NUL are kept with U+FFFD in their place, under the SHA-256 of the bytes as posted.
    @Test func garbageIsReadUnderItsDigest() throws {
        let receiver = PlayNotificationReceiver(pushToken: Secret(Self.pushToken))
        let cases: [([UInt8], String, String)] = [
            ([0x7B, 0xFF, 0xFE, 0x7D], "{\u{FFFD}\u{FFFD}}", "body_not_utf8"),
            (Array("a\u{0}b".utf8), "a\u{FFFD}b", "body_holds_nul"),
            (Array(#"{"message": {"data": "e30="}}"#.utf8), #"{"message": {"data": "e30="}}"#, "envelope_without_message_id"),
            (Array(#"{"message": {"messageId": "a\u0000b"}}"#.utf8), #"{"message": {"messageId": "a\u0000b"}}"#, "message_id_holds_nul"),
        ]
        for (bytes, text, problem) in cases {
            let push = receiver.read(bytes)
            #expect(push.messageID == "body-sha256:" + Self.sha256(bytes))
            #expect(push.body == text)
            #expect(push.problem == problem)
            #expect(push.kind == "undecodable" && !push.needsAsking)
        }
    }

    /// One worker pass, on the test's connection.
    static func pass(_ worker: ReceiverWorker, _ world: World) async throws -> ReceiverWorker.Pass {
        try await worker.pass(on: world.connection)
    }

    // MARK: - The statements

    @Test func everyPlayReceiverSQLFileParsesAndSaysWhatItReadsAndWrites() throws {
        for file in [
            PlayReceiverSQL.storeNotification, PlayReceiverSQL.claim, PlayReceiverSQL.finish, PlayReceiverSQL.postpone,
            PlayReceiverSQL.pending, PlayReceiverSQL.metrics, PlayReceiverSQL.whiteRow,
        ] {
            let script = try file.script
            #expect(!script.statements.isEmpty, "\(file)")
            #expect(script.declaredValues == Set(script.valueNames), "\(file)")
        }
    }

    @Test func thePushTokenIsComparedWhole() {
        let receiver = PlayNotificationReceiver(pushToken: Secret(Self.pushToken))
        #expect(receiver.authorizes(token: Self.pushToken))
        #expect(!receiver.authorizes(token: String(Self.pushToken.dropLast())))
        #expect(!receiver.authorizes(token: Self.pushToken + "0"))
        #expect(!receiver.authorizes(token: ""))
        #expect(!receiver.authorizes(token: nil))
        let unset = PlayNotificationReceiver(pushToken: nil)
        #expect(!unset.acceptsPushes)
        #expect(!unset.authorizes(token: ""))
        #expect(!unset.authorizes(token: Self.pushToken))
    }

    // MARK: - The listener

    /// Google's envelope shapes (DOMAIN.md): both message id spellings, `eventTimeMillis` a string,
    /// data that is not JSON, data that is not base64; a wrong or missing token stores nothing, a
    /// redelivery stores nothing more, and a token Google does not know changes nothing.
    @Test func pushesAreStoredOncePerMessageWhateverTheirDataAndOnlyWithTheToken() async throws {
        let world = try World("play_rtdn_shapes")
        try await world.sim.withRunning { running in
            let settings = try await world.settings(running)
            try await Self.withReceiver(settings) { url, worker, counters in
                let unknown = #"{"version":"1.0","packageName":"\#(Self.package)","eventTimeMillis":"1764669600123","oneTimeProductNotification":{"version":"1.0","notificationType":1,"purchaseToken":"no-such-token-anywhere","sku":"coin42"}}"#
                let test = #"{"version":"1.0","packageName":"\#(Self.package)","eventTimeMillis":"1764669600123","testNotification":{"version":"1.0"}}"#
                // Refused before anything is stored: no token, a wrong one, one a character short.
                #expect(try await Self.post(Self.envelope(id: "1", data: Self.base64(test)), to: url, token: nil) == 403)
                #expect(try await Self.post(Self.envelope(id: "1", data: Self.base64(test)), to: url, token: "guess-guess-guess-guess") == 403)
                #expect(try await Self.post(
                    Self.envelope(id: "1", data: Self.base64(test)), to: url, token: String(Self.pushToken.dropLast())) == 403)
                #expect(try world.count("play_notifications") == 0)

                #expect(try await Self.post(Self.envelope(id: "101", data: Self.base64(test), spelling: ["messageId"]), to: url) == 204)
                #expect(try await Self.post(Self.envelope(id: "102", data: Self.base64(unknown), spelling: ["message_id"]), to: url) == 204)
                #expect(try await Self.post(Self.envelope(id: "103", data: Self.base64("not json")), to: url) == 204)
                #expect(try await Self.post(Self.envelope(id: "104", data: "%%% not base64 %%%"), to: url) == 204)
                // Pub/Sub redelivers with the same id: stored once.
                #expect(try await Self.post(Self.envelope(id: "102", data: Self.base64(unknown)), to: url) == 204)
                // Not an envelope at all: garbage, stored and answered 204 too (Pub/Sub would
                // redeliver a refusal for days), once per body.
                #expect(try await Self.post(#"{"hello": "world"}"#, to: url) == 204)
                #expect(try await Self.post("garbage, not JSON", to: url) == 204)
                #expect(try await Self.post("garbage, not JSON", to: url) == 204)
                #expect(try await Self.post(Self.envelope(id: "105", data: String(repeating: "A", count: 300_000)), to: url) == 413)

                #expect(try world.notifications() == [
                    "test stored", "one_time pending", "undecodable stored", "undecodable stored", "undecodable stored",
                    "undecodable stored",
                ])
                let stored = try world.connection.query(
                    """
                    SELECT message_id, coalesce(data, '-'), coalesce(data_error, '-'), coalesce(purchase_token, '-'),
                           coalesce(extract(epoch FROM event_time)::bigint::text, '-')
                      FROM reconcile.play_notifications ORDER BY id
                    """
                ).map { row in try (0..<5).map { try row.decode(String.self, at: $0) }.joined(separator: " | ") }
                #expect(stored == [
                    "101 | \(test) | - | - | 1764669600",
                    "102 | \(unknown) | - | no-such-token-anywhere | 1764669600",
                    "103 | not json | data_not_json | - | -",
                    "104 | - | data_not_base64 | - | -",
                    "body-sha256:\(Self.sha256(#"{"hello": "world"}"#)) | - | envelope_without_message | - | -",
                    "body-sha256:\(Self.sha256("garbage, not JSON")) | - | envelope_not_json | - | -",
                ])
                let body = try world.connection.query("SELECT body FROM reconcile.play_notifications WHERE message_id = '104'")[0]
                    .decode(String.self, at: 0)
                #expect(body == Self.envelope(id: "104", data: "%%% not base64 %%%"))

                let counts = counters.snapshot
                #expect(counts["play.forbidden"] == 3)
                #expect(counts["play.stored"] == 6)
                #expect(counts["play.undecodable"] == 4)
                #expect(counts["play.duplicate"] == 2)
                #expect((counts["play.rejected"] ?? 0) == 0)
                #expect(counts["play.too_large"] == 1)
                let metrics = try ReceiverMetrics.text(counters: counters, lastPass: Date(), on: world.connection)
                #expect(metrics.contains("reconcile_receiver_play_requests_total{outcome=\"undecodable\"} 4\n"), "\(metrics)")
                #expect(metrics.contains("reconcile_receiver_play_requests_total{outcome=\"forbidden\"} 3\n"), "\(metrics)")
                #expect(metrics.contains("reconcile_receiver_play_notifications{kind=\"undecodable\",state=\"stored\"} 4\n"), "\(metrics)")
                #expect(!metrics.contains(Self.pushToken))

                // The token Google does not know (404): asked once, nothing changed.
                let pass = try await Self.pass(worker, world)
                #expect(pass.playApplied == 0)
                #expect(try world.notifications() == [
                    "test stored", "one_time not_found", "undecodable stored", "undecodable stored", "undecodable stored",
                    "undecodable stored",
                ])
                #expect(try world.count("apple_transactions") == 0)
                #expect(try world.count("receiver_judgements") == 0)
                #expect(try world.items().isEmpty)
                // Nothing is asked again.
                let requests = world.sim.play.stats
                _ = try await Self.pass(worker, world)
                #expect(world.sim.play.stats == requests)
            }
        }
    }

    // MARK: - The worker

    /// A refund Google made of a purchase the ledger credited: the notification only names the
    /// token; Google's voided list and the token's state say it is voided; the same pass judges it.
    @Test func aVoidedPurchaseStillCreditedIsARefundedDeliveryItemWithinOnePass() async throws {
        let world = try World("play_rtdn_voided")
        let purchase = try world.purchase()
        let order = try #require(purchase.orderId)
        try world.credit(order)
        try await world.sim.withRunning { running in
            let settings = try await world.settings(running)
            try await Self.withReceiver(settings) { url, worker, _ in
                _ = try world.sim.play.voidPurchase(purchase.purchaseToken, voidedReason: 1)
                let pushed = try await world.sim.play.pushNotification(.init(
                    kind: .voided, purchaseToken: purchase.purchaseToken, url: url, pushToken: Self.pushToken))
                #expect(pushed.status == 204)
                // Redelivered: stored once.
                let again = try await world.sim.play.pushNotification(.init(
                    kind: .voided, purchaseToken: purchase.purchaseToken, url: url, pushToken: Self.pushToken,
                    messageId: pushed.messageId))
                #expect(again.status == 204)
                #expect(try world.notifications() == ["voided pending"])

                let pass = try await Self.pass(worker, world)
                #expect(pass.playApplied == 1)
                #expect(pass.itemsOpened == 1)
                #expect(try world.items() == ["refunded_delivery \(order) alice open"])
                #expect(try world.notifications() == ["voided applied"])
                let void = try world.connection.query(
                    "SELECT order_id, voided_reason FROM reconcile.play_voided_purchases")
                #expect(void.count == 1)
                #expect(try void.first?.decode(String.self, at: 0) == order)
                #expect(try void.first?.decode(Int.self, at: 1) == 1)
                let row = try world.connection.query(
                    "SELECT store, source, revocation_date IS NOT NULL, purchase_token FROM reconcile.apple_transactions WHERE transaction_id = $1",
                    [order])
                #expect(try row.first?.decode(String.self, at: 0) == "google_play")
                #expect(try row.first?.decode(Bool.self, at: 2) == true)
                #expect(try row.first?.decode(String.self, at: 3) == purchase.purchaseToken)

                // The next pass has nothing to do, and the item stays as it is.
                let next = try await Self.pass(worker, world)
                #expect(next.playApplied == 0 && next.itemsOpened == 0)
                #expect(try world.items() == ["refunded_delivery \(order) alice open"])
            }
        }
    }

    /// A purchase Google says is paid that the ledger never credited: judged once its grace has
    /// passed, not before, with the purchase's own account binding as its buyer.
    @Test func aPaidPurchaseNeverCreditedIsAMissedDeliveryOnceItsGraceHasPassed() async throws {
        let world = try World("play_rtdn_missed")
        // alice is a known account (another delivery of hers), not this purchase's.
        try world.credit("GPA.9999-0000-0000-00001")
        try await world.sim.withRunning { running in
            let settings = try await world.settings(running, grace: 20)
            try await Self.withReceiver(settings) { url, worker, _ in
                // Bought now, once the keys exist (making them takes seconds on a loaded machine).
                let purchase = try world.purchase(boughtAgo: 0)
                let order = try #require(purchase.orderId)
                let pushed = try await world.sim.play.pushNotification(.init(
                    kind: .oneTime, purchaseToken: purchase.purchaseToken, url: url, pushToken: Self.pushToken))
                #expect(pushed.status == 204)
                let first = try await Self.pass(worker, world)
                #expect(first.playApplied == 1)
                #expect(first.judged == 0)
                #expect(try world.items().isEmpty)
                let due = try world.connection.query(
                    "SELECT due_at FROM reconcile.receiver_judgements WHERE transaction_id = $1", [order]
                )[0].decode(Date.self, at: 0)
                #expect(due > Date())
                try await Task.sleep(for: .milliseconds(Int64(max(0, due.timeIntervalSinceNow) * 1000) + 300))
                let second = try await Self.pass(worker, world)
                #expect(second.judged == 1)
                #expect(try world.items() == ["missed_delivery \(order) alice open"])
            }
        }
    }

    /// A subscription's notifications: subscriptionsv2 names its latest order, so the purchase and
    /// then its renewal (`..0`, an order of its own on the same token) are stored, and the renewal
    /// the ledger never credited is a missed_delivery while the credited purchase is not.
    @Test func aSubscriptionRenewalNeverCreditedIsAMissedDelivery() async throws {
        let world = try World("play_rtdn_subscription")
        try world.connection.executeScript(
            "INSERT INTO reconcile.products VALUES ('vip_month', 'auto_renewable', 30000, 'CNY');")
        let bought = Date().addingTimeInterval(-40 * 86_400)
        let subscription = try world.sim.play.createPurchase(.init(
            productId: "vip_month", kind: .subscription, obfuscatedAccountId: "alice", acknowledged: true,
            purchaseTimeMillis: Int64(bought.timeIntervalSince1970 * 1000)))
        let first = try #require(subscription.orderId)
        try world.connection.execute(
            """
            INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at)
            VALUES ($1, 'alice', 'vip_month', 1, $2)
            """, [first, bought])
        try await world.sim.withRunning { running in
            let settings = try await world.settings(running, grace: 0)
            try await Self.withReceiver(settings) { url, worker, _ in
                let purchased = try await world.sim.play.pushNotification(.init(
                    kind: .subscription, purchaseToken: subscription.purchaseToken, notificationType: 4, url: url,
                    pushToken: Self.pushToken))
                #expect(purchased.status == 204)
                let pass = try await Self.pass(worker, world)
                #expect(pass.playApplied == 1)
                #expect(try world.items().isEmpty)
                let row = try world.connection.query(
                    """
                    SELECT product_type, original_transaction_id, expires_date IS NOT NULL,
                           abs(extract(epoch FROM purchase_date - $2::timestamptz)) < 1
                      FROM reconcile.apple_transactions WHERE transaction_id = $1
                    """, [first, bought])
                #expect(try row.first?.decode(String.self, at: 0) == "auto_renewable")
                #expect(try row.first?.decode(String.self, at: 1) == first)
                #expect(try row.first?.decode(Bool.self, at: 2) == true)
                #expect(try row.first?.decode(Bool.self, at: 3) == true)

                _ = try world.sim.play.renewSubscription(subscription.purchaseToken)
                let renewed = try await world.sim.play.pushNotification(.init(
                    kind: .subscription, purchaseToken: subscription.purchaseToken, notificationType: 2, url: url,
                    pushToken: Self.pushToken))
                #expect(renewed.status == 204)
                let next = try await Self.pass(worker, world)
                #expect(next.playApplied == 1)
                #expect(try world.items() == ["missed_delivery \(first)..0 alice open"])
                let original = try world.connection.query(
                    "SELECT original_transaction_id FROM reconcile.apple_transactions WHERE transaction_id = $1",
                    [first + "..0"])
                #expect(try original.first?.decode(String.self, at: 0) == first)
            }
        }
    }

    /// Without a service account nothing can be asked: the notification is kept, pending, and
    /// nothing is stored or judged of it.
    @Test func withoutAServiceAccountNotificationsAreKeptNotActedOn() async throws {
        let world = try World("play_rtdn_no_api")
        let purchase = try world.purchase()
        try await world.sim.withRunning { running in
            let settings = try await world.settings(running, serviceAccount: false)
            try await Self.withReceiver(settings) { url, worker, _ in
                let pushed = try await world.sim.play.pushNotification(.init(
                    kind: .oneTime, purchaseToken: purchase.purchaseToken, url: url, pushToken: Self.pushToken))
                #expect(pushed.status == 204)
                let pass = try await Self.pass(worker, world)
                #expect(pass.playApplied == 0 && pass.runID == nil)
                #expect(try world.notifications() == ["one_time pending"])
                #expect(try world.count("apple_transactions") == 0)
                #expect(world.sim.play.stats.tokensIssued == 0)
            }
        }
    }

    /// A notification the receiver stored and never asked about (it ran without a service account)
    /// is asked about by the next nightly run, in its `play_api` stage, as Apple's stored
    /// notifications are applied by every run: the purchase only that notification told of, paid
    /// and never credited, is a missed_delivery in that run's report, and nothing is left for
    /// the receiver to judge again. (The multi-night world's whole-history run, over notifications
    /// no worker asked about, found none of them before.)
    @Test func theNightlyRunAsksAboutTheNotificationsTheReceiverDidNot() async throws {
        let world = try World("play_rtdn_run_asks")
        // alice is a known account (another delivery of hers), not this purchase's.
        try world.credit("GPA.9999-0000-0000-00001")
        let purchase = try world.purchase()
        let order = try #require(purchase.orderId)
        try await world.sim.withRunning { running in
            let receiving = try await world.settings(running, serviceAccount: false)
            try await Self.withReceiver(receiving) { url, worker, _ in
                let pushed = try await world.sim.play.pushNotification(.init(
                    kind: .oneTime, purchaseToken: purchase.purchaseToken, url: url, pushToken: Self.pushToken))
                #expect(pushed.status == 204)
                _ = try await Self.pass(worker, world)
            }
            #expect(try world.notifications() == ["one_time pending"])
            let nightly = try await world.settings(running)
            let report = try await Stores.withJob(settings: nightly, logger: Self.quiet) {
                try await $0.run(.init(since: Date().addingTimeInterval(-3 * 86_400)))
            }
            // (alice's other credit, of an order no upload or Google answer holds, is the nightly
            // rules' unverified_delivery.)
            #expect(try world.items() == [
                "missed_delivery \(order) alice open", "unverified_delivery GPA.9999-0000-0000-00001 alice open",
            ])
            #expect(report.summary.open == 2)
            #expect(report.play?.notificationsAsked == 1)
            #expect(try world.notifications() == ["one_time applied"])
            #expect(try world.count("receiver_judgements") == 0)
            let json = try String(
                contentsOf: world.state.appendingPathComponent("reports/run-\(report.runID)/report.json"), encoding: .utf8)
            #expect(json.contains(#""notifications_asked": 1"#))
            // The next run has nothing left to ask.
            let again = try await Stores.withJob(settings: nightly, logger: Self.quiet) {
                try await $0.run(.init(since: Date().addingTimeInterval(-3 * 86_400)))
            }
            #expect(again.play?.notificationsAsked == 0)
        }
    }

    /// Google refusing the service account (401 permissionDenied): the pass goes on, the
    /// notification stays pending with the reason, and is applied once Google accepts again.
    @Test func googleRefusingTheServiceAccountKeepsTheNotificationForLater() async throws {
        let world = try World("play_rtdn_refused")
        let purchase = try world.purchase()
        let order = try #require(purchase.orderId)
        var timing = PlayNotificationWorker.Timing()
        timing.refusedWaitSeconds = 0.5
        try await world.sim.withRunning { running in
            let settings = try await world.settings(running)
            try await Self.withReceiver(settings, playTiming: timing) { url, worker, _ in
                let pushed = try await world.sim.play.pushNotification(.init(
                    kind: .oneTime, purchaseToken: purchase.purchaseToken, url: url, pushToken: Self.pushToken))
                #expect(pushed.status == 204)
                world.sim.state.faults = SimulatorFaults(play: PlaySimulatorFaults(permissionDeniedShare: 1))
                let refused = try await Self.pass(worker, world)
                #expect(refused.playApplied == 0)
                let row = try world.connection.query(
                    "SELECT state, attempts, last_error FROM reconcile.play_notifications")[0]
                #expect(try row.decode(String.self, at: 0) == "pending")
                #expect(try row.decode(Int.self, at: 1) == 1)
                let error = try row.decode(String.self, at: 2)
                #expect(error.contains("401") || error.contains("403"), "\(error)")
                #expect(try world.count("apple_transactions") == 0)

                world.sim.state.faults = .none
                try await Task.sleep(for: .milliseconds(700))
                let later = try await Self.pass(worker, world)
                #expect(later.playApplied == 1)
                #expect(try world.notifications() == ["one_time applied"])
                let stored = try world.connection.query(
                    "SELECT transaction_id FROM reconcile.apple_transactions WHERE store = 'google_play'"
                ).map { try $0.decode(String.self, at: 0) }
                #expect(stored == [order])
            }
        }
    }

    // MARK: - The command

    /// The real `reconcile notifications receive` with Play on: the simulator's Pub/Sub push of a
    /// void reaches `--play-path`, the worker turns it into the refund's item, and the push token
    /// appears nowhere in the process's output.
    @Test func theCommandServesThePlayPathAndKeepsItsTokenOutOfTheLog() async throws {
        let world = try World("play_rtdn_command")
        let purchase = try world.purchase()
        let order = try #require(purchase.orderId)
        try world.credit(order)
        let logs = world.state.appendingPathComponent("logs")
        try await world.sim.withRunning { running in
            var environment = running.jobEnvironment.merging(try await running.playSettings().jobEnvironment) { $1 }
            environment.merge([
                "DATABASE_URL": world.database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
                "RECONCILE_REPORT_DIR": world.state.appendingPathComponent("reports").path,
                "RECONCILE_PLAY_PUSH_TOKEN": Self.pushToken,
            ]) { $1 }
            let portFile = logs.appendingPathComponent("receiver.port")
            let child = try ChildProcess(
                try ChildProcess.executable("reconcile"),
                arguments: [
                    "notifications", "receive", "--listen", "127.0.0.1:0", "--port-file", portFile.path,
                    "--pass-interval", "0.2", "--play-path", "/play/push",
                ],
                environment: environment, logDirectory: logs, label: "receiver")
            defer { child.send(SIGKILL) }
            try await NotificationReceiverTests.eventually("the receiver listening: \(child.output)") {
                FileManager.default.fileExists(atPath: portFile.path) || !child.process.isRunning
            }
            let port = try String(contentsOf: portFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            let url = "http://127.0.0.1:\(port)/play/push"
            #expect(try await Self.post(Self.envelope(id: "1", data: Self.base64("{}")), to: url, token: "wrong-token-wrong-token") == 403)
            _ = try world.sim.play.voidPurchase(purchase.purchaseToken)
            let pushed = try await world.sim.play.pushNotification(.init(
                kind: .voided, purchaseToken: purchase.purchaseToken, url: url, pushToken: Self.pushToken))
            #expect(pushed.status == 204)
            try await NotificationReceiverTests.eventually("the refund's item: \(child.output)") {
                try world.items() == ["refunded_delivery \(order) alice open"]
            }
            child.send(SIGTERM)
            #expect(try await child.waitForExit() == 0, "\(child.output)")
            #expect(!child.output.contains(Self.pushToken))
            #expect(child.output.contains("refused"), "\(child.output)")
        }
    }
}
