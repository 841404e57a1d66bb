import AppStore
import AppStoreSimulator
import Foundation
import Postgres
import Reconciliation

/// The demo's game, players, uploads and ledger.
struct DemoWorld {
    static let bundle = "com.hncs.szj"
    /// (product id, type, price in CNY milliunits)
    static let catalogue: [(String, String, Int64)] = [
        ("com.hncs.szj.coin42", "consumable", 6000), ("com.hncs.szj.coin210", "consumable", 30000),
        ("com.hncs.szj.coin686", "consumable", 98000), ("com.hncs.szj.coin1386", "consumable", 198000),
        ("com.hncs.szj.coin4886", "consumable", 648000), ("com.hncs.szj.vip_month", "non_renewing", 30000),
        ("com.hncs.szj.vip_auto", "auto_renewable", 25000),
    ]

    struct UploadRow {
        var user: String
        var kind = "app_receipt"
        var payload: String
        var username: String?
        var claimed: String?
        var device: String
        var uploadedAt: Date
    }

    struct DeliveryRow {
        var transaction: String
        var user: String
        var product: String
        var quantity: Int
        var deliveredAt: Date
        var revokedAt: Date?
        /// `reconcile.deliveries.store`: nil is the App Store.
        var store: String?
    }

    let simulator: AppStoreSimulator
    let forger: AppStoreSimulator
    var random: SplitMix64
    var uploads: [UploadRow] = []
    var deliveries: [DeliveryRow] = []
    /// StoreKit 2 players' appAccountToken → account (`reconcile.account_tokens`).
    var accountTokens: [(UUID, String)] = []
    var accidents: [String] = []
    var nextTransaction: Int64 = 2_000_000_100_000_000
    let now = Date()

    init(simulator: AppStoreSimulator, forger: AppStoreSimulator, random: SplitMix64) {
        self.simulator = simulator
        self.forger = forger
        self.random = random
    }

    mutating func transactionID() -> String {
        nextTransaction += Int64.random(in: 1...40, using: &random)
        return String(nextTransaction)
    }

    mutating func device() -> String {
        let models = ["iPhone15,2", "iPhone14,5", "iPhone16,1", "iPhone13,2", "iPad13,18"]
        let os = ["17.5.1", "18.1", "18.2", "16.7.10"]
        return #"{"model": "\#(models.randomElement(using: &random)!)", "os": "\#(os.randomElement(using: &random)!)", "app": "4.2.\#(Int.random(in: 0...3, using: &random))"}"#
    }

    func sha256(_ text: String, on connection: Connection) throws -> String {
        try connection.query(SQL.accountHash, ["account": text])[0].decode(String.self, at: 0)
    }

    mutating func receipt(_ purchases: [SimulatedReceipt.Purchase], bundle: String = DemoWorld.bundle,
                          environment: SimulatedReceipt.Environment = .production, forged: Bool = false) throws -> String {
        try (forged ? forger : simulator).issueReceipt(
            SimulatedReceipt(bundleID: bundle, environment: environment, purchases: purchases)).receiptData
    }

    mutating func purchase(_ product: String, at date: Date, quantity: Int = 1, cancelled: Date? = nil,
                           original: String? = nil) -> SimulatedReceipt.Purchase {
        let id = transactionID()
        return .init(productID: product, transactionID: id, originalTransactionID: original ?? id, purchaseDate: date,
                     quantity: quantity, cancellationDate: cancelled)
    }

    /// `user` uploads `payload`, which claims the transaction `claimed`, from a device of the draw.
    mutating func upload(
        _ user: String, _ payload: String, kind: String = "app_receipt", username: String? = nil,
        claiming claimed: String?, at uploadedAt: Date
    ) {
        uploads.append(UploadRow(
            user: user, kind: kind, payload: payload, username: username, claimed: claimed, device: device(),
            uploadedAt: uploadedAt))
    }

    /// The app's ledger credits `product` for the transaction to `user`.
    mutating func credit(
        _ transaction: String, _ product: String, to user: String, quantity: Int = 1, at deliveredAt: Date
    ) {
        deliveries.append(DeliveryRow(
            transaction: transaction, user: user, product: product, quantity: quantity, deliveredAt: deliveredAt))
    }

    mutating func generate(players: Int) throws {
        // Normal life: every purchase uploaded once and credited once. Every third player runs the
        // StoreKit 2 client, which uploads the signed transaction bound to its account token.
        for index in 1...players {
            let user = String(format: "player-%05d", index)
            if index % 3 == 0 {
                try storeKit2Player(user)
                continue
            }
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let (product, _, _) = Self.catalogue.randomElement(using: &random)!
                let bought = now.addingTimeInterval(-Double.random(in: 3600...(2 * 86_400), using: &random))
                let item = purchase(product, at: bought, quantity: product.contains("coin42") && Bool.random(using: &random) ? 2 : 1)
                upload(user, try receipt([item]), claiming: item.transactionID, at: bought.addingTimeInterval(5))
                credit(
                    item.transactionID!, product, to: user, quantity: item.quantity ?? 1, at: bought.addingTimeInterval(7))
            }
        }
        try plantAccidents()
        try plantStoreKit2Accident()
        try plantDeskOrders()
    }

    /// The customer of the support desk's demo orders: the app's account, its appAccountToken,
    /// and the Apple account (the simulator's customer) that paid.
    static let deskCustomer = (user: "player-09001", token: UUID(uuidString: "00000000-0000-4000-8000-000000009001")!,
                               apple: "desk-customer")

    /// Orders to try `reconcile lookup` on, with fixed ids and no draw from `random` (the rest of
    /// the demo stays as it was): MK5TTY6V5X holds a purchase credited and one the app never
    /// credited and no upload ever carried (the nightly run cannot see it; Look Up Order ID can),
    /// MK7QPL2D9A one credited purchase.
    static let deskOrders: [(order: String, transaction: String, product: String, price: Int64, credited: Bool)] = [
        ("MK5TTY6V5X", "2000000999000001", "com.hncs.szj.coin686", 98000, true),
        ("MK5TTY6V5X", "2000000999000002", "com.hncs.szj.coin42", 6000, false),
        ("MK7QPL2D9A", "2000000999000003", "com.hncs.szj.coin210", 30000, true),
    ]

    /// The demo orders as the simulator's `POST /sim/transactions` takes them. The running
    /// simulator keeps purchases in memory, so scripts/demo posts these on every start.
    static func deskOrderRequests(now: Date) -> [SimulatedTransaction] {
        deskOrders.map { order in
            var request = SimulatedTransaction(
                productId: order.product, customer: deskCustomer.apple, bundleId: bundle, environment: .production,
                type: .consumable, quantity: 1, purchaseDate: now.addingTimeInterval(-7200),
                appAccountToken: deskCustomer.token, price: order.price, currency: "CNY")
            request.transactionId = order.transaction
            request.orderId = order.order
            return request
        }
    }

    /// The ledger and uploads of the desk's demo orders: what the app credited, uploaded by StoreKit 2.
    mutating func plantDeskOrders() throws {
        accountTokens.append((Self.deskCustomer.token, Self.deskCustomer.user))
        for (request, order) in zip(Self.deskOrderRequests(now: now), Self.deskOrders) where order.credited {
            let created = try simulator.createTransaction(request)
            uploads.append(UploadRow(
                user: Self.deskCustomer.user, kind: "signed_transaction", payload: created.signedTransaction,
                claimed: created.transactionId, device: "{\"model\": \"iPhone16,1\", \"os_version\": \"18.2\"}",
                uploadedAt: now.addingTimeInterval(-7190)))
            deliveries.append(DeliveryRow(
                transaction: created.transactionId, user: Self.deskCustomer.user, product: order.product, quantity: 1,
                deliveredAt: now.addingTimeInterval(-7180)))
        }
    }

    mutating func storeKit2Player(_ user: String) throws {
        let token = UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", accountTokens.count + 1))!
        accountTokens.append((token, user))
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            let (product, type, price) = Self.catalogue.randomElement(using: &random)!
            let bought = now.addingTimeInterval(-Double.random(in: 3600...(2 * 86_400), using: &random))
            let productType: ProductType = switch type {
            case "consumable": .consumable
            case "non_renewing": .nonRenewing
            default: .autoRenewable
            }
            let created = try simulator.createTransaction(SimulatedTransaction(
                productId: product, customer: user, bundleId: Self.bundle, environment: .production, type: productType,
                quantity: 1, purchaseDate: bought, appAccountToken: token, price: price, currency: "CNY"))
            upload(
                user, created.signedTransaction, kind: "signed_transaction", claiming: created.transactionId,
                at: bought.addingTimeInterval(3))
            credit(created.transactionId, product, to: user, at: bought.addingTimeInterval(4))
        }
    }

    /// The real-world accidents of DOMAIN.md, two of each.
    mutating func plantAccidents() throws {
        let day = now.addingTimeInterval(-86_400)
        func player(_ number: Int) -> String { String(format: "player-%05d", number) }
        for round in 0..<2 {
            let base = 11 + round * 40
            func at(_ seconds: Double) -> Date { day.addingTimeInterval(seconds) }
            // The app was killed before it told the server; the next receipt still carries it.
            let killed = purchase("com.hncs.szj.coin1386", at: day)
            let later = purchase("com.hncs.szj.coin42", at: at(600))
            upload(player(base), try receipt([killed, later]), claiming: later.transactionID, at: at(605))
            credit(later.transactionID!, later.productID, to: player(base), at: at(606))
            accidents.append("app killed before upload: \(killed.transactionID!) of \(player(base)) never credited")
            // Callbacks lost with several unfinished transactions: only the last one was credited.
            let pending = (0..<3).map { minute in purchase("com.hncs.szj.coin210", at: at(Double(minute) * 60)) }
            upload(player(base + 1), try receipt(pending), claiming: pending[2].transactionID, at: at(200))
            credit(pending[2].transactionID!, pending[2].productID, to: player(base + 1), at: at(201))
            accidents.append("lost callbacks: 2 of 3 unfinished purchases of \(player(base + 1)) never credited")
            // Bought under one account (applicationUsername = SHA-256 of it), uploaded under another.
            let misdelivered = purchase("com.hncs.szj.coin686", at: day)
            upload(
                player(base + 3), try receipt([misdelivered]), username: "sha256:" + player(base + 2),
                claiming: misdelivered.transactionID, at: at(3600))
            credit(misdelivered.transactionID!, misdelivered.productID, to: player(base + 3), at: at(3601))
            accidents.append("wrong account: \(player(base + 2))'s purchase credited to \(player(base + 3))")
            // Credited twice by a retrying backend.
            let twice = purchase("com.hncs.szj.coin4886", at: day)
            upload(player(base + 4), try receipt([twice]), claiming: twice.transactionID, at: at(5))
            for second in [6.0, 9.0] {
                credit(twice.transactionID!, twice.productID, to: player(base + 4), at: at(second))
            }
            accidents.append("double credit: \(twice.transactionID!) credited twice to \(player(base + 4))")
            // Refunded by Apple after delivery.
            let refunded = purchase("com.hncs.szj.vip_month", at: at(-86_400), cancelled: at(3600))
            upload(player(base + 5), try receipt([refunded]), claiming: refunded.transactionID, at: at(7200))
            credit(refunded.transactionID!, refunded.productID, to: player(base + 5), at: at(-86_000))
            accidents.append("refund after delivery: \(refunded.transactionID!) of \(player(base + 5)) still credited")
            // A tester's sandbox purchase credited in production.
            let sandbox = purchase("com.hncs.szj.coin4886", at: day)
            let tester = "tester-\(round + 1)"
            upload(tester, try receipt([sandbox], environment: .sandbox), claiming: sandbox.transactionID, at: at(10))
            credit(sandbox.transactionID!, sandbox.productID, to: tester, at: at(11))
            accidents.append("sandbox purchase by \(tester) credited as real money")
            // A receipt of another app, uploaded to claim coins.
            let foreign = purchase("com.other.puzzle.gems", at: day)
            upload(
                player(base + 6), try receipt([foreign], bundle: ["com.other.puzzle", "com.clone.szj"][round]),
                claiming: foreign.transactionID, at: at(50))
            accidents.append("receipt of another app uploaded by \(player(base + 6))")
            // A receipt replayed from another account, and credited again there.
            let replayed = purchase("com.hncs.szj.coin1386", at: day)
            let payload = try receipt([replayed])
            for (user, minute) in [(player(base + 7), 1.0), (player(base + 8), 90.0)] {
                upload(user, payload, claiming: replayed.transactionID, at: at(minute * 60))
                credit(replayed.transactionID!, replayed.productID, to: user, at: at(minute * 60 + 1))
            }
            accidents.append("replayed receipt: \(player(base + 7))'s receipt uploaded again by \(player(base + 8))")
            // A forged receipt (signed by someone else's CA) credited by an old backend.
            let forged = purchase("com.hncs.szj.coin4886", at: day)
            upload(player(base + 9), try receipt([forged], forged: true), claiming: forged.transactionID, at: at(30))
            credit(forged.transactionID!, forged.productID, to: player(base + 9), at: at(31))
            accidents.append("forged receipt credited to \(player(base + 9))")
            // Order brushing: a cheap purchase used to claim an expensive product.
            let cheap = purchase("com.hncs.szj.coin42", at: day)
            upload(player(base + 10), try receipt([cheap]), claiming: cheap.transactionID, at: at(20))
            credit(cheap.transactionID!, "com.hncs.szj.coin4886", to: player(base + 10), at: at(21))
            accidents.append("a coin42 purchase credited as coin4886 to \(player(base + 10))")
            // Three coin packs bought at once, one credited.
            let bulk = purchase("com.hncs.szj.coin42", at: day, quantity: 3)
            upload(player(base + 12), try receipt([bulk]), claiming: bulk.transactionID, at: at(20))
            credit(bulk.transactionID!, bulk.productID, to: player(base + 12), at: at(21))
            accidents.append("quantity 3 bought, 1 credited to \(player(base + 12))")
        }
    }

    /// StoreKit 2: a purchase bound to one account's appAccountToken, replayed by another client.
    mutating func plantStoreKit2Accident() throws {
        guard let (token, owner) = accountTokens.first else { return }
        let thief = "player-00099"
        let created = try simulator.createTransaction(SimulatedTransaction(
            productId: "com.hncs.szj.coin4886", customer: owner, bundleId: Self.bundle, environment: .production,
            type: .consumable, quantity: 1, purchaseDate: now.addingTimeInterval(-7200), appAccountToken: token,
            price: 648000, currency: "CNY"))
        upload(
            thief, created.signedTransaction, kind: "signed_transaction", claiming: created.transactionId,
            at: now.addingTimeInterval(-7000))
        credit(created.transactionId, "com.hncs.szj.coin4886", to: thief, at: now.addingTimeInterval(-6990))
        accidents.append("StoreKit 2: \(owner)'s purchase (bound by appAccountToken) credited to \(thief)")
    }

    func write(to connection: Connection) throws {
        var hashed: [String: String] = [:]
        for upload in uploads where upload.username?.hasPrefix("sha256:") == true {
            let account = String(upload.username!.dropFirst("sha256:".count))
            hashed[account] = try sha256(account, on: connection)
        }
        try connection.copyIn(SQL.copyProducts) { writer in
            for (product, type, price) in Self.catalogue { try writer.append([product, type, Int64(price), "CNY"]) }
        }
        try connection.copyIn(SQL.copyUploads) { writer in
            for upload in uploads {
                let username = upload.username.map { $0.hasPrefix("sha256:") ? hashed[String($0.dropFirst(7))]! : $0 }
                try writer.append([upload.user, upload.kind, upload.payload, username, upload.claimed, upload.device,
                                   upload.uploadedAt])
            }
        }
        try connection.copyIn(SQL.copyAccountTokens) { writer in
            for (token, user) in accountTokens { try writer.append([token, user]) }
        }
        try connection.copyIn(SQL.copyDeliveries) { writer in
            for delivery in deliveries {
                try writer.append([delivery.transaction, delivery.user, delivery.product, delivery.quantity,
                                   delivery.deliveredAt, delivery.revokedAt, delivery.store])
            }
        }
    }

    /// The seed's statements (`sql/demo/`).
    enum SQL {
        static let seeded: SQLFile = "demo/seeded.sql"
        static let accountHash: SQLFile = "demo/account_hash.sql"
        static let copyProducts: SQLFile = "demo/copy_products.sql"
        static let copyUploads: SQLFile = "demo/copy_uploads.sql"
        static let copyAccountTokens: SQLFile = "demo/copy_account_tokens.sql"
        static let copyDeliveries: SQLFile = "demo/copy_deliveries.sql"
    }
}
