import AppStoreSimulator
import Foundation
import Logging
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// The support desk for Google Play (SPEC section 18, "Desk"): a `GPA.` order id is looked up with
/// Google's Orders API and its purchase token's state (stored like the nightly run's answer), held
/// or not; without a service account, in what the job holds, and shown with its ledger rows, uploads and verdict; an account's lookup
/// shows both stores' transactions and says Google Play has no history by account to ask.
@Suite("Support desk: Google Play orders")
struct PlayDeskTests {
    static let package = PlayOrderLookupTests.package
    static let quiet = PlayOrderLookupTests.quiet

    static func desk(_ world: PlayOrderLookupTests.World, _ running: RunningSimulator, serviceAccount: Bool = true,
                     _ body: @escaping @Sendable (DeskService, Connection) async throws -> Void) async throws
    {
        let play = try await running.playSettings()
        var environment = play.jobEnvironment.merging([
            "DATABASE_URL": world.database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
            "RECONCILE_RECEIPT_VERIFICATION": "local",
        ]) { $1 }
        if !serviceAccount { environment["GOOGLE_PLAY_SERVICE_ACCOUNT_FILE"] = nil }
        let settings = try Settings(lookup: environment.lookup)
        try await GooglePlayServices.withServices(settings: settings, logger: Self.quiet) { services in
            let connection = try Connection(url: world.database.url)
            try await body(DeskService(settings: settings, serverAPI: nil, play: services, logger: Self.quiet), connection)
        }
    }

    @Test func aPlayOrderIsLookedUpWithTheOrdersAPIAndStored() async throws {
        let world = try PlayOrderLookupTests.world("desk_play_orders")
        let millis = Int64(world.bought.timeIntervalSince1970 * 1000)
        let refunded = try world.sim.play.createPurchase(.init(
            productId: "coin42", obfuscatedAccountId: "alice", acknowledged: true, purchaseTimeMillis: millis))
        _ = try world.sim.play.voidPurchase(refunded.purchaseToken)
        let refundedOrder = try #require(refunded.orderId)
        let neverCredited = try world.sim.play.createPurchase(.init(
            productId: "coin42", obfuscatedAccountId: "bob", acknowledged: true, purchaseTimeMillis: millis))
        let neverCreditedOrder = try #require(neverCredited.orderId)
        let unknown = "GPA.9999-0000-0000-00011"
        let token = UUID()
        let boundByToken = try world.sim.play.createPurchase(.init(
            productId: "coin42", obfuscatedAccountId: token.uuidString.lowercased(), acknowledged: true,
            purchaseTimeMillis: millis))
        let boundByTokenOrder = try #require(boundByToken.orderId)
        try PlayOrderLookupTests.deliver(refundedOrder, to: "alice", in: world)
        try PlayOrderLookupTests.deliver(unknown, to: "carol", in: world)
        try world.connection.plantDelivery("9100000001", to: "alice", product: "coin42", age: "2 days")
        let sim = world.sim
        try await world.sim.withRunning { running in
            try await Self.desk(world, running) { desk, connection in
                // Refunded and still credited: stored (play_api), and the ledger's lookup answered.
                let picture = try await desk.lookup(try DeskQuery(.order, refundedOrder.lowercased()), on: connection)
                #expect(picture.order == CustomerPicture.Order(orderID: refundedOrder, status: .valid))
                #expect(picture.transactions.map(\.transactionID) == [refundedOrder])
                let transaction = try #require(picture.transactions.first)
                #expect(transaction.store == .googlePlay)
                #expect(transaction.verdict.rawValue == "refunded_delivery")
                #expect(transaction.sources.contains("play_api"))
                #expect(transaction.deliveries.map(\.userID) == ["alice"])
                #expect(transaction.buyer.userID == "alice")
                #expect(picture.asked == [.stored, .ordersGet, .purchaseState])
                #expect(try connection.query(
                    "SELECT result FROM reconcile.transaction_lookups WHERE transaction_id = $1", [refundedOrder]
                )[0].decode(String.self, at: 0) == "found")
                let json = String(decoding: try picture.json(), as: UTF8.self)
                #expect(json.contains(#""store" : "google_play""#))
                #expect(json.contains(#""asked" : ["#))

                // Held now, and still asked: the picture is what Google says at this moment.
                let asked = sim.play.stats.requestsByEndpoint["orders"] ?? 0
                let again = try await desk.lookup(try DeskQuery.recognising(refundedOrder), on: connection)
                #expect(again.asked == [.stored, .ordersGet, .purchaseState])
                #expect(again.transactions.first?.verdict.rawValue == "refunded_delivery")
                #expect(sim.play.stats.requestsByEndpoint["orders"] == asked + 1)

                // Paid and never credited: its buyer's missed delivery.
                let missed = try await desk.lookup(try DeskQuery(.order, neverCreditedOrder), on: connection)
                #expect(missed.transactions.first?.verdict.rawValue == "missed_delivery")
                // Stored with Google's account binding (obfuscatedExternalAccountId).
                #expect(try connection.query(
                    "SELECT obfuscated_account_id FROM reconcile.apple_transactions WHERE transaction_id = $1",
                    [neverCreditedOrder])[0].decode(String?.self, at: 0) == "bob")
                // Then credited, and refunded since the job stored it: the lookup sees the refund
                // before any run does.
                try connection.execute(
                    """
                    INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at)
                    VALUES ($1, 'bob', 'coin42', 1, now() - interval '2 days')
                    """, [neverCreditedOrder])
                _ = try sim.play.voidPurchase(neverCredited.purchaseToken)
                let refundedSince = try await desk.lookup(try DeskQuery(.order, neverCreditedOrder), on: connection)
                #expect(refundedSince.transactions.first?.verdict.rawValue == "refunded_delivery")

                // Unknown to Google and credited: invalid, and the credit is an unverified delivery.
                let invalid = try await desk.lookup(try DeskQuery(.order, unknown), on: connection)
                #expect(invalid.order?.status == .invalid)
                #expect(invalid.transactions.map { "\($0.transactionID) \($0.verdict.rawValue)" } == [
                    "\(unknown) unverified_delivery",
                ])
                // Unknown and credited to nobody: nothing found.
                let nothing = try await desk.lookup(try DeskQuery(.order, "GPA.9999-0000-0000-00012"), on: connection)
                #expect(nothing.order?.status == .invalid)
                #expect(nothing.isEmpty)

                // An account: both stores' transactions, and no Play history by account to ask.
                let account = try await desk.lookup(try DeskQuery(.user, "alice"), on: connection)
                #expect(Set(account.transactions.map(\.store)) == [.appStore, .googlePlay])
                #expect(account.unavailable == [.playHistory])
                // Bob's purchase is found by its account binding although the ledger never credited it.
                let bob = try await desk.lookup(try DeskQuery(.user, "bob"), on: connection)
                #expect(bob.transactions.map(\.transactionID) == [neverCreditedOrder])
                // An app that binds both stores' purchases with one UUID: --token finds the Play one.
                _ = try await desk.lookup(try DeskQuery(.order, boundByTokenOrder), on: connection)
                let byToken = try await desk.lookup(try DeskQuery(.token, token.uuidString), on: connection)
                #expect(byToken.transactions.map { "\($0.transactionID) \($0.store.rawValue)" } == [
                    "\(boundByTokenOrder) google_play",
                ])
                #expect(byToken.unavailable == [.playHistory])
            }
        }
    }

    @Test func withoutAServiceAccountOnlyWhatTheJobHoldsIsShown() async throws {
        let world = try PlayOrderLookupTests.world("desk_play_no_api")
        let credited = "GPA.9999-0000-0000-00021"
        try PlayOrderLookupTests.deliver(credited, to: "carol", in: world)
        try await world.sim.withRunning { running in
            try await Self.desk(world, running, serviceAccount: false) { desk, connection in
                let picture = try await desk.lookup(try DeskQuery(.order, credited), on: connection)
                #expect(picture.order?.status == .notAsked)
                #expect(picture.transactions.map(\.transactionID) == [credited])
                #expect(picture.asked == [.stored])
                await #expect(throws: DeskError.orderNeedsPlayAPI) {
                    try await desk.lookup(try DeskQuery(.order, "GPA.9999-0000-0000-00022"), on: connection)
                }
            }
        }
    }

    /// `reconcile lookup GPA.…`, in text and as JSON, against the simulator's Orders API.
    @Test func theCommandLineLooksUpAPlayOrder() async throws {
        let world = try PlayOrderLookupTests.world("desk_play_cli")
        let millis = Int64(world.bought.timeIntervalSince1970 * 1000)
        let refunded = try world.sim.play.createPurchase(.init(
            productId: "coin42", obfuscatedAccountId: "alice", acknowledged: true, purchaseTimeMillis: millis))
        _ = try world.sim.play.voidPurchase(refunded.purchaseToken)
        let order = try #require(refunded.orderId)
        try PlayOrderLookupTests.deliver(order, to: "alice", in: world)
        try await world.sim.withRunning { running in
            let play = try await running.playSettings()
            let environment = play.jobEnvironment.merging([
                "DATABASE_URL": world.database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
                "RECONCILE_RECEIPT_VERIFICATION": "local",
            ]) { $1 }
            let text = try await DeskCommandLineTests.reconcile(["lookup", order], environment: environment, label: "gpa")
            #expect(text.status == 2, "\(text.out) \(text.err)")
            #expect(text.out.contains("Order \(order): a Google Play order; 1 transaction."), "\(text.out)")
            #expect(text.out.contains("1. Google Play order \(order) — coin42"), "\(text.out)")
            #expect(text.out.contains("Asked: the job's records, Google's Orders API (orders.get)"), "\(text.out)")
            #expect(text.out.contains("refunded_delivery:"), "\(text.out)")

            let json = try await DeskCommandLineTests.reconcile(
                ["lookup", "--order", order, "--json"], environment: environment, label: "gpa-json")
            #expect(json.status == 2, "\(json.err)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
            #expect((object["order"] as? [String: Any])?["status"] as? String == "valid")
            // Stored by the first lookup, and asked again: the second shows Google's answer of now.
            #expect(object["asked"] as? [String] == ["stored", "orders_get", "purchase_state"])
            let transactions = try #require(object["transactions"] as? [[String: Any]])
            #expect(transactions.map { $0["store"] as? String } == ["google_play"])
            #expect(transactions.first?["verdict"] as? String == "refunded_delivery")

            let user = try await DeskCommandLineTests.reconcile(
                ["lookup", "--user", "alice"], environment: environment, label: "gpa-user")
            #expect(user.out.contains("Google Play keeps no purchase history by account"), "\(user.out)")

            let unknown = try await DeskCommandLineTests.reconcile(
                ["lookup", "GPA.9999-0000-0000-00031"], environment: environment, label: "gpa-unknown")
            #expect(unknown.status == 1, "\(unknown.err)")
            #expect(unknown.out.contains("does not know this order ID"), "\(unknown.out)")
        }
    }

    @Test func playOrderIDsAreRecognised() throws {
        #expect(try DeskQuery.recognising("gpa.3312-5678-9012-34567..0") == DeskQuery(.order, "GPA.3312-5678-9012-34567..0"))
        #expect(try DeskQuery.recognising("GPA.3312-5678-9012-34567").store == .googlePlay)
        #expect(try DeskQuery(.transaction, "GPA.1").store == .googlePlay)
        #expect(try DeskQuery.recognising("MK5TTY6V5X").store == .appStore)
        #expect(throws: DeskError.self) { try DeskQuery(.order, "GPA.12;34") }
    }
}
