import AppStoreSimulator
import Crypto
import Foundation

/// The generated history of SPEC section 12: a game selling coin packs, unlocks and VIP
/// subscriptions, `transactions` Apple-confirmed purchases over two years by a tenth as many
/// players, the ledger the game's backend wrote for them, the uploads that carried them, and a
/// small share of the accidents each finding kind stands for.
///
/// Every row is a pure function of its transaction's index, so each table is written in its
/// own pass (one COPY each) and the passes agree without holding anything in memory.
struct BenchWorld {
    /// The bundle the job accepts.
    static let bundle = "com.example.coins"
    /// Another app's bundle: uploads of its receipts are foreign_bundle findings.
    static let foreignBundle = "com.other.game"

    /// The catalogue: id, `reconcile.products` type, price in milli-units of CNY.
    static let consumables: [(String, Int64)] = [
        ("coins_60", 6000), ("coins_300", 30000), ("coins_980", 98000), ("coins_1980", 198_000),
        ("coins_3280", 328_000), ("coins_6480", 648_000),
    ]
    static let unlocks: [(String, Int64)] = [
        ("remove_ads", 18000), ("starter_pack", 30000), ("level_pack_1", 12000), ("level_pack_2", 12000),
    ]
    static let subscriptions: [(String, Int64)] = [("vip_monthly", 30000), ("vip_yearly", 298_000)]

    /// What happened to one purchase, in parts per million of all purchases. The rest is a
    /// normal purchase delivered once to its buyer.
    enum Fate: CaseIterable {
        /// Paid and never credited (missed_delivery).
        case missed
        /// Credited twice (duplicate_delivery).
        case duplicate
        /// Uploaded by another account, which was credited (wrong_account).
        case wrongAccount
        /// Credited as another product (product_mismatch).
        case wrongProduct
        /// Credited another quantity (quantity_mismatch).
        case wrongQuantity
        /// Refunded by Apple, credit kept (refunded_delivery).
        case refundKept
        /// A tester's sandbox purchase credited as real money (environment_mismatch).
        case sandboxCredited
        /// The receipt was also uploaded by a second account (shared_receipt).
        case shared
        /// A delivery for a transaction no source of Apple's knows (unverified_delivery), beside
        /// this normal purchase.
        case phantomDelivery
        /// Another app's receipt uploaded, not credited, still waiting to be verified
        /// (foreign_bundle, found by the run that verifies it).
        case foreignUpload
        /// Refunded, and the backend took the credit back: not a finding.
        case refundRevoked
        /// A tester's sandbox purchase not credited: not a finding.
        case sandboxTester
        /// Uploaded after the last run: the bench's first run verifies its JWS (not a finding).
        case freshUpload

        /// Parts per million of purchases. About 0.17% of purchases are findings.
        var partsPerMillion: Int {
            switch self {
            case .missed: 300
            case .duplicate: 200
            case .wrongAccount: 200
            case .wrongProduct: 100
            case .wrongQuantity: 100
            case .refundKept: 300
            case .sandboxCredited: 100
            case .shared: 100
            case .phantomDelivery: 200
            case .foreignUpload: 50
            case .refundRevoked: 3000
            case .sandboxTester: 1000
            case .freshUpload: 100
            }
        }
    }

    /// How a product is matched.
    enum Category { case consumable, unlock, subscription }

    /// One purchase and everything the tables say about it.
    struct Purchase {
        var index: Int
        var transactionID: String
        var originalTransactionID: String
        var buyer: Int
        var category: Category
        var productID: String
        var price: Int64
        var quantity: Int
        var purchaseDate: Date
        var expiresDate: Date?
        var fate: Fate?
        /// A restore (unlock) or renewal (subscription) of the purchase before it.
        var isFollowUp: Bool
        /// The buyer's client is StoreKit 2 (JWS with appAccountToken) rather than StoreKit 1
        /// (receipt with applicationUsername = SHA-256 of the account).
        var storeKit2: Bool
        /// A second, unrelated account (the uploader of a wrong_account, the second uploader
        /// of a shared receipt).
        var other: Int

        var bundleID: String { fate == .foreignUpload ? BenchWorld.foreignBundle : BenchWorld.bundle }
        var environment: String { fate == .sandboxCredited || fate == .sandboxTester ? "Sandbox" : "Production" }
        var revocationDate: Date? {
            fate == .refundKept || fate == .refundRevoked ? purchaseDate.addingTimeInterval(86400 * 3) : nil
        }
        /// Already in the white table before the bench's first run.
        var isKnownToJob: Bool { fate != .foreignUpload && fate != .freshUpload }
        /// The account that uploaded it.
        var uploader: Int { fate == .wrongAccount ? other : buyer }
    }

    /// One ledger row.
    struct Delivery {
        var transactionID: String
        var user: Int
        var productID: String
        var quantity: Int
        var deliveredAt: Date
        var revokedAt: Date?
    }

    let transactions: Int
    let users: Int
    let seed: UInt64
    /// The first purchase; the last one is two days before `end`.
    let start: Date
    let end: Date

    init(transactions: Int, seed: UInt64, now: Date) {
        self.transactions = transactions
        users = max(100, transactions / 10)
        self.seed = seed
        end = now.addingTimeInterval(-2 * 86400)
        start = end.addingTimeInterval(-730 * 86400)
    }

    func transactionID(_ index: Int) -> String { String(2_000_000_000_000_000 + index) }
    func userID(_ user: Int) -> String { "user-" + pad(user, 7) }

    /// The StoreKit 2 appAccountToken of an account (what `reconcile.account_tokens` maps back).
    func accountToken(_ user: Int) -> UUID {
        var random = SplitMix64(seed: seed ^ 0x746f_6b65_6e00_0000 ^ UInt64(user))
        let high = random.next()
        let low = random.next()
        return UUID(uuid: (
            UInt8(truncatingIfNeeded: high >> 56), UInt8(truncatingIfNeeded: high >> 48),
            UInt8(truncatingIfNeeded: high >> 40), UInt8(truncatingIfNeeded: high >> 32),
            UInt8(truncatingIfNeeded: high >> 24), UInt8(truncatingIfNeeded: high >> 16),
            UInt8(truncatingIfNeeded: (high >> 8) & 0x0f | 0x40), UInt8(truncatingIfNeeded: high),
            UInt8(truncatingIfNeeded: (low >> 56) & 0x3f | 0x80), UInt8(truncatingIfNeeded: low >> 48),
            UInt8(truncatingIfNeeded: low >> 40), UInt8(truncatingIfNeeded: low >> 32),
            UInt8(truncatingIfNeeded: low >> 24), UInt8(truncatingIfNeeded: low >> 16),
            UInt8(truncatingIfNeeded: low >> 8), UInt8(truncatingIfNeeded: low)))
    }

    /// What the StoreKit 1 seed apps put in applicationUsername: hex SHA-256 of the account.
    func hashedUserID(_ user: Int) -> String {
        SHA256.hash(data: Data(userID(user).utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// The purchase at `index`, independent of every other purchase but the one before it.
    func purchase(_ index: Int) -> Purchase {
        var random = SplitMix64(seed: seed &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15)
        let buyer = Int(random.next() % UInt64(users))
        var other = Int(random.next() % UInt64(users))
        if other == buyer { other = (buyer + 1) % users }
        let roll = random.next() % 100
        let category: Category = roll < 80 ? .consumable : roll < 90 ? .unlock : .subscription
        let date = start.addingTimeInterval(
            end.timeIntervalSince(start) * Double(index) / Double(max(1, transactions))
                + Double(random.next() % 60))
        var purchase: Purchase
        switch category {
        case .consumable:
            let (product, price) = Self.consumables[Int(random.next() % UInt64(Self.consumables.count))]
            purchase = Purchase(
                index: index, transactionID: transactionID(index), originalTransactionID: transactionID(index),
                buyer: buyer, category: category, productID: product, price: price,
                quantity: random.next() % 20 == 0 ? 2 : 1, purchaseDate: date, expiresDate: nil, fate: nil,
                isFollowUp: false, storeKit2: buyer % 2 == 0, other: other)
        case .unlock:
            let (product, price) = Self.unlocks[Int(random.next() % UInt64(Self.unlocks.count))]
            purchase = Purchase(
                index: index, transactionID: transactionID(index), originalTransactionID: transactionID(index),
                buyer: buyer, category: category, productID: product, price: price, quantity: 1, purchaseDate: date,
                expiresDate: nil, fate: nil, isFollowUp: false, storeKit2: buyer % 2 == 0, other: other)
        case .subscription:
            let (product, price) = Self.subscriptions[Int(random.next() % UInt64(Self.subscriptions.count))]
            purchase = Purchase(
                index: index, transactionID: transactionID(index), originalTransactionID: transactionID(index),
                buyer: buyer, category: category, productID: product, price: price, quantity: 1, purchaseDate: date,
                expiresDate: date.addingTimeInterval(product == "vip_yearly" ? 365 * 86400 : 30 * 86400), fate: nil,
                isFollowUp: false, storeKit2: buyer % 2 == 0, other: other)
        }
        // Odd indexes may restore (unlock) or renew (subscription) the even purchase before
        // them; even indexes never follow up, so this looks back one step at most.
        if index % 2 == 1, random.next() % 4 == 0 {
            let previous = self.purchase(index - 1)
            if previous.category != .consumable, previous.fate == nil {
                purchase.category = previous.category
                purchase.buyer = previous.buyer
                purchase.storeKit2 = previous.storeKit2
                purchase.productID = previous.productID
                purchase.price = previous.price
                purchase.quantity = 1
                purchase.originalTransactionID = previous.transactionID
                purchase.isFollowUp = true
                if let expires = previous.expiresDate {
                    purchase.expiresDate = expires.addingTimeInterval(expires.timeIntervalSince(previous.purchaseDate))
                }
                return purchase
            }
        }
        // Accidents happen to coin packs; a restore or renewal carries none.
        if category == .consumable {
            var draw = Int(random.next() % 1_000_000)
            for fate in Fate.allCases {
                if draw < fate.partsPerMillion {
                    purchase.fate = fate
                    break
                }
                draw -= fate.partsPerMillion
            }
        }
        return purchase
    }

    /// The ledger rows the game's backend wrote for a purchase.
    func deliveries(_ purchase: Purchase) -> [Delivery] {
        // A restore unlocks again what the original delivery granted; the backend writes no
        // new credit. A renewal extends VIP: one credit per period.
        if purchase.isFollowUp, purchase.category == .unlock { return [] }
        let normal = Delivery(
            transactionID: purchase.transactionID, user: purchase.buyer, productID: purchase.productID,
            quantity: purchase.quantity, deliveredAt: purchase.purchaseDate.addingTimeInterval(4), revokedAt: nil)
        switch purchase.fate {
        case nil, .refundKept, .sandboxCredited, .shared, .freshUpload:
            return [normal]
        case .missed, .sandboxTester, .foreignUpload:
            return []
        case .duplicate:
            var again = normal
            again.deliveredAt = normal.deliveredAt.addingTimeInterval(3600)
            return [normal, again]
        case .wrongAccount:
            var credited = normal
            credited.user = purchase.other
            return [credited]
        case .wrongProduct:
            var credited = normal
            credited.productID = purchase.productID == "coins_6480" ? "coins_60" : "coins_6480"
            return [credited]
        case .wrongQuantity:
            var credited = normal
            credited.quantity = purchase.quantity + 1
            return [credited]
        case .refundRevoked:
            var credited = normal
            credited.revokedAt = purchase.revocationDate?.addingTimeInterval(600)
            return [credited]
        case .phantomDelivery:
            var phantom = normal
            phantom.transactionID = "9" + purchase.transactionID.dropFirst()
            phantom.deliveredAt = normal.deliveredAt.addingTimeInterval(7200)
            return [normal, phantom]
        }
    }

    private func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
